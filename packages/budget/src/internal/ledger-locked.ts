import type { JsonValue, KeelError } from "@keel/core";
import type { Doc, DocDecision, DocStore, LogStore } from "@keel/store";
import { err, ok, ResultAsync, type Result } from "neverthrow";
import { readCloses } from "./ledger-log.js";
import { decideFold, type LoggedClose, type ThresholdCrossed } from "./ledger-rules.js";
import { parseLedger, type Ledger } from "./ledger-schema.js";
import type { KnownLedger, LedgerDecision } from "./ledger-store.js";

/*
 * The ledger changed under the store's lock (`docs.update`, capability `lockedUpdates`): many
 * hosts on one ledger take turns on the row instead of retrying compare-and-swap conflicts.
 *
 * The decision runs while the row is locked, so it must be synchronous: the closes it folds are
 * read from the close log before, from the record the ledger last folded (as this budget last
 * knew it) on. Under the lock the ledger says where its fold really stands; when the closes read
 * do not reach back to it (another writer restored an older ledger, or the log lost records and
 * the anchor is gone), the decision writes nothing and asks for the log to be read from further
 * back, then runs again. Closes appended after the read are not folded by this write; they
 * stay in the log after the ledger's new `foldedSeq` and every read and later fold counts them,
 * as with the compare-and-swap path (whose condition is on the document, not the log).
 */

/** Closes read from the close log: every close with a seq above `afterSeq`, in seq order. */
interface ReadCloses {
  afterSeq: number;
  closes: readonly LoggedClose[];
}

/**
 * The closes of `read` not yet folded into `ledger`, or the `afterSeq` to read the log from when
 * `read` does not reach back far enough (mirrors `unfoldedCloses`: the record at `foldedSeq`
 * must be the one the ledger names, else every close of the log is folded by reservation).
 */
export function closesToFold(ledger: Ledger, read: ReadCloses): { closes: readonly LoggedClose[] } | { rereadFrom: number } {
  const foldedSeq = ledger.foldedSeq ?? 0;
  if (foldedSeq === 0 || ledger.foldedId === undefined) {
    return read.afterSeq <= foldedSeq ? { closes: read.closes.filter((close) => close.seq > foldedSeq) } : { rereadFrom: foldedSeq };
  }
  if (read.afterSeq > foldedSeq - 1) return { rereadFrom: foldedSeq - 1 };
  const anchor = read.closes.find((close) => close.seq === foldedSeq);
  if (anchor?.id === ledger.foldedId) return { closes: read.closes.filter((close) => close.seq > foldedSeq) };
  return read.afterSeq === 0 ? { closes: read.closes } : { rereadFrom: 0 };
}

/** What one locked decision left behind: its outcome and what the write carries. */
export interface LockedOutcome<D> {
  outcome: D;
  thresholds: readonly ThresholdCrossed[];
  next: Ledger | undefined;
  logSeq: number;
}

/** After this many short reads of the close log, it is read whole (which always reaches back far enough). */
const REREADS = 2;

/**
 * Changes the ledger at `key` in one locked update: the close log read first (after `hint`, the
 * fold this budget last knew, minus one for its anchor), then `decide` on the locked ledger with
 * those closes folded in. Resolves the document written (`undefined` when the decision wrote
 * nothing) and the last decision's outcome; `onDecided` hears of each decision as it is made (so
 * that a caller can judge an ambiguous failure by it).
 */
export function changeLedgerLocked<D>(
  docs: DocStore & Required<Pick<DocStore, "update">>,
  logs: LogStore | undefined,
  key: readonly string[],
  decide: (ledger: Ledger | undefined) => LedgerDecision<D>,
  known: KnownLedger | undefined,
  onDecided: (decided: LockedOutcome<D>) => void = () => undefined,
): ResultAsync<{ written: Doc | undefined; last: LockedOutcome<D> }, KeelError> {
  const location = key.join("/");
  const run = async (): Promise<Result<{ written: Doc | undefined; last: LockedOutcome<D> }, KeelError>> => {
    let afterSeq = Math.max(0, (known?.stored.foldedSeq ?? 0) - 1);
    for (let reread = 0; ; reread++) {
      const closes = logs ? await readCloses(logs, key, afterSeq) : ok([]);
      if (closes.isErr()) return err(closes.error);
      const read: ReadCloses = { afterSeq, closes: closes.value };
      let last: Result<LockedOutcome<D>, KeelError> | undefined;
      let rereadFrom: number | undefined;
      const locked = (doc: Doc | undefined): DocDecision => {
        last = undefined;
        rereadFrom = undefined;
        // The same version is the same ledger (versions are never reused): no parse, no validation.
        const current: Result<Ledger | undefined, KeelError> =
          doc === undefined ? ok(undefined) : known && doc.version === known.doc.version ? ok(known.stored) : parseLedger(doc.value, location);
        if (current.isErr()) return (last = err(current.error)), { none: true };
        let ledger = current.value;
        let thresholds: readonly ThresholdCrossed[] = [];
        let logSeq = ledger?.foldedSeq ?? 0;
        if (logs && ledger) {
          const unfolded = closesToFold(ledger, read);
          if ("rereadFrom" in unfolded) return (rereadFrom = unfolded.rereadFrom), { none: true };
          const folded = decideFold(ledger, unfolded.closes);
          ledger = folded.ledger;
          thresholds = folded.thresholds;
          logSeq = unfolded.closes.at(-1)?.seq ?? logSeq;
        }
        const decided = decide(ledger);
        if (decided.isErr()) return (last = err(decided.error)), { none: true };
        const { next, outcome } = decided.value;
        const made: LockedOutcome<D> = { outcome, thresholds: next ? thresholds : [], next, logSeq };
        onDecided(made);
        last = ok(made);
        return next ? { value: next as unknown as JsonValue } : { none: true };
      };
      const updated = await docs.update([...key], locked);
      if (updated.isErr()) return err(updated.error);
      const outcome = last as Result<LockedOutcome<D>, KeelError> | undefined;
      if (rereadFrom !== undefined || outcome === undefined) {
        // A read from seq 0 always reaches back far enough (see closesToFold).
        afterSeq = reread + 1 >= REREADS ? 0 : (rereadFrom ?? 0);
        continue;
      }
      return outcome.map((value) => ({ written: value.next ? updated.value : undefined, last: value }));
    }
  };
  return new ResultAsync(run());
}
