import type { JsonValue, KeelError, KeelErrorCode } from "@keel/core";
import { type Doc, type DocStore, type LogStore } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { errAsync, ok, okAsync, ResultAsync, type Result } from "neverthrow";
import { foldLogged } from "./ledger-log.js";
import type { ThresholdCrossed } from "./ledger-rules.js";
import { parseLedger, type Ledger } from "./ledger-schema.js";

/** A decision over the current ledger: the ledger to write (or `undefined` for none) and its outcome. */
export type LedgerDecision<D> = Result<{ next: Ledger | undefined; outcome: D }, KeelError>;

/** Failures after which a write may or may not have happened. */
const AMBIGUOUS: ReadonlySet<KeelErrorCode> = new Set<KeelErrorCode>(["io_failed", "unavailable", "timeout"]);

/** Conflicting tries per round of {@link updateDoc}, and rounds (with a growing random pause between). */
const RETRIES_PER_ROUND = 8;
const ROUNDS = 16;

/** Reads and checks the ledger at `key` (`undefined` when there is none yet). */
export function readLedger(docs: DocStore, key: readonly string[]): ResultAsync<Ledger | undefined, KeelError> {
  return docs.get(key).andThen((doc) => (doc ? parseLedger(doc.value, key.join("/")) : ok(undefined)));
}

/** The ledger at `key` with every logged close folded in (what a read sees). */
export function loadLedger(docs: DocStore, logs: LogStore | undefined, key: readonly string[]): ResultAsync<Ledger | undefined, KeelError> {
  return readLedger(docs, key).andThen((ledger) => foldLogged(logs, key, ledger).map((folded) => folded.ledger));
}

/** The close log to fold before deciding, and who hears of thresholds the fold crossed. */
export interface FoldOptions {
  logs: LogStore | undefined;
  onThresholds?: (crossed: readonly ThresholdCrossed[]) => void;
}

/**
 * Changes the ledger at `key` with one compare-and-swap write (through `updateDoc`): `decide` runs
 * on the freshest ledger, again after every conflict, so it must be pure. Conflicts are retried
 * in rounds with a random, growing pause (many processes may write one ledger). When a write
 * fails ambiguously (`io_failed`, `unavailable`, `timeout`: it may have landed), the ledger is
 * read back and `landed` decides whether the last decision is in it; if so it counts as done.
 * With a close log (`fold.logs`), `decide` sees the ledger with the closes logged since its
 * `foldedSeq` folded in, and the write carries the fold (compacting the log into the totals).
 *
 * @returns the outcome of the decision that was written (or that wrote nothing).
 */
export function changeLedger<D>(
  docs: DocStore,
  key: readonly string[],
  decide: (ledger: Ledger | undefined) => LedgerDecision<D>,
  landed: (ledger: Ledger | undefined, outcome: D) => boolean,
  fold: FoldOptions = { logs: undefined },
): ResultAsync<D, KeelError> {
  let last: { outcome: D; thresholds: readonly ThresholdCrossed[] } | undefined;
  const location = key.join("/");
  const update = (doc: Doc<JsonValue> | undefined): ResultAsync<JsonValue | undefined, KeelError> => {
    const current: Result<Ledger | undefined, KeelError> = doc ? parseLedger(doc.value, location) : ok(undefined);
    if (current.isErr()) return errAsync(current.error);
    return foldLogged(fold.logs, key, current.value).andThen((folded) => {
      const decided = decide(folded.ledger);
      if (decided.isErr()) return errAsync(decided.error);
      last = { outcome: decided.value.outcome, thresholds: decided.value.next ? folded.thresholds : [] };
      return okAsync(decided.value.next as unknown as JsonValue | undefined);
    });
  };
  const attempt = (round: number): ResultAsync<D, KeelError> =>
    updateDoc(docs, key, update, { retries: RETRIES_PER_ROUND })
      .map(() => {
        fold.onThresholds?.(last!.thresholds);
        return last!.outcome;
      })
      .orElse((error) => {
        if (error.code === "conflict" && round < ROUNDS) return pause(round).andThen(() => attempt(round + 1));
        const decided = last;
        if (!AMBIGUOUS.has(error.code) || !decided) return errAsync(error);
        return readLedger(docs, key)
          .orElse(() => errAsync(error))
          .andThen((ledger) => (landed(ledger, decided.outcome) ? okAsync(decided.outcome) : errAsync(error)));
      });
  return attempt(1);
}

function pause(round: number): ResultAsync<void, never> {
  const ms = Math.random() * Math.min(2 ** round, 100);
  return ResultAsync.fromSafePromise(new Promise<void>((resolve) => setTimeout(resolve, ms)));
}
