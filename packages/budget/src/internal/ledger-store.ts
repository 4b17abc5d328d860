import type { JsonValue, KeelError, KeelErrorCode } from "@keel/core";
import { type Doc, type DocStore, type LogStore } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { errAsync, ok, okAsync, ResultAsync, type Result } from "neverthrow";
import { changeLedgerLocked } from "./ledger-locked.js";
import { foldLogged, type FoldedLedger } from "./ledger-log.js";
import { decideFold, type LoggedClose, type ThresholdCrossed } from "./ledger-rules.js";
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

/**
 * A ledger document as this budget last wrote it, kept so that the next operation on it neither
 * reads, validates nor folds it again. It is only ever used under a condition the store checks:
 * a write goes under `{ expectedVersion: doc.version }` (a stale one is a `conflict`, then a
 * fresh read), and a close is appended under `{ expectedSeq: logSeq }` after a read of the
 * document found `doc.version` still current. A failed condition drops it.
 */
export interface KnownLedger {
  /** The document as stored (its version is the condition of the next write). */
  doc: Doc<JsonValue>;
  /** `doc.value`, validated. */
  stored: Ledger;
  /** The closes logged after `stored`'s fold, up to `logSeq`: every one, in seq order. */
  closes: readonly LoggedClose[];
  /** `stored` with `closes` folded in: what a read would see. */
  view: Ledger;
  /** The close log's last seq (0 without a close log or when it is empty). */
  logSeq: number;
}

/** The {@link KnownLedger}s of one budget, by ledger location (`key.join("/")`). */
export type KnownLedgers = Map<string, KnownLedger>;

/** Ledgers a budget remembers at most (the least recently written are forgotten first). */
const MAX_KNOWN_LEDGERS = 64;

/** Remembers `known` at `location`, forgetting the oldest when there are too many. */
export function rememberLedger(ledgers: KnownLedgers, location: string, known: KnownLedger): void {
  ledgers.delete(location);
  ledgers.set(location, known);
  if (ledgers.size > MAX_KNOWN_LEDGERS) ledgers.delete(ledgers.keys().next().value!);
}

/**
 * How {@link changeLedger} reads: the close log to fold before deciding, who hears of
 * thresholds the fold crossed, and the budget's known ledgers (read and updated).
 */
export interface ChangeOptions {
  logs: LogStore | undefined;
  onThresholds?: (crossed: readonly ThresholdCrossed[]) => void;
  known?: KnownLedgers;
  /**
   * Whether the store declares `lockedUpdates`: then the ledger is changed by one `docs.update`
   * under the store's lock (see `changeLedgerLocked`), with no compare-and-swap retry.
   */
  locked?: boolean;
}

/**
 * Changes the ledger at `key` with one compare-and-swap write (through `updateDoc`): `decide` runs
 * on the freshest ledger, again after every conflict, so it must be pure. Conflicts are retried
 * in rounds with a random, growing pause (many processes may write one ledger). When a write
 * fails ambiguously (`io_failed`, `unavailable`, `timeout`: it may have landed), the ledger is
 * read back and `landed` decides whether the last decision is in it; if so it counts as done.
 * With a close log (`options.logs`), `decide` sees the ledger with the closes logged since its
 * `foldedSeq` folded in, and the write carries the fold (compacting the log into the totals).
 * With `options.known`, the first try starts from the ledger this budget last wrote (no read, no
 * validation: a stale one costs a `conflict` and a fresh read), and the written ledger is
 * remembered for the next operation. With `options.locked` (the store declares `lockedUpdates`),
 * the change is one `docs.update` instead: `decide` runs on the ledger while the store holds
 * its lock, after the close log was read (see `changeLedgerLocked`), and no conflict is retried.
 *
 * @returns the outcome of the decision that was written (or that wrote nothing).
 */
export function changeLedger<D>(
  docs: DocStore,
  key: readonly string[],
  decide: (ledger: Ledger | undefined) => LedgerDecision<D>,
  landed: (ledger: Ledger | undefined, outcome: D) => boolean,
  options: ChangeOptions = { logs: undefined },
): ResultAsync<D, KeelError> {
  let last: { outcome: D; thresholds: readonly ThresholdCrossed[]; next: Ledger | undefined; logSeq: number } | undefined;
  const location = key.join("/");
  const known = options.known?.get(location);
  const update = (doc: Doc<JsonValue> | undefined): ResultAsync<JsonValue | undefined, KeelError> => {
    if (known && doc === known.doc) return decideOn(foldKnown(options.logs, key, known));
    const current: Result<Ledger | undefined, KeelError> = doc ? parseLedger(doc.value, location) : ok(undefined);
    if (current.isErr()) return errAsync(current.error);
    return decideOn(foldLogged(options.logs, key, current.value));
  };
  const decideOn = (fold: ResultAsync<FoldedLedger, KeelError>): ResultAsync<JsonValue | undefined, KeelError> =>
    fold.andThen((folded) => {
      const decided = decide(folded.ledger);
      if (decided.isErr()) return errAsync(decided.error);
      const { next, outcome } = decided.value;
      last = { outcome, thresholds: next ? folded.thresholds : [], next, logSeq: folded.logSeq };
      return okAsync(next as unknown as JsonValue | undefined);
    });
  const remember = (written: Doc<JsonValue> | undefined) => {
    if (!options.known) return;
    // Only a ledger this call wrote is known exactly; after a write of nothing, forget rather than guess.
    if (written && last?.next) rememberLedger(options.known, location, { doc: written, stored: last.next, closes: [], view: last.next, logSeq: last.logSeq });
    else options.known.delete(location);
  };
  if (options.locked && docs.update) {
    const lockedDocs = docs as DocStore & Required<Pick<DocStore, "update">>;
    const decided = (made: NonNullable<typeof last>) => {
      last = made;
    };
    return changeLedgerLocked(lockedDocs, options.logs, key, decide, known, decided).map(({ written, last: made }) => {
      remember(written);
      options.onThresholds?.(made.thresholds);
      return made.outcome;
    }).orElse((error) => {
      options.known?.delete(location);
      const made = last;
      if (!AMBIGUOUS.has(error.code) || !made) return errAsync(error);
      // The update may have landed (a lost connection during COMMIT): the ledger as read now says.
      return readLedger(docs, key)
        .orElse(() => errAsync(error))
        .andThen((ledger) => (landed(ledger, made.outcome) ? okAsync(made.outcome) : errAsync(error)));
    });
  }
  const attempt = (round: number): ResultAsync<D, KeelError> =>
    updateDoc(docs, key, update, { retries: RETRIES_PER_ROUND, ...(round === 1 && known ? { known: { doc: known.doc } } : {}) })
      .map((written) => {
        remember(written);
        options.onThresholds?.(last!.thresholds);
        return last!.outcome;
      })
      .orElse((error) => {
        options.known?.delete(location);
        if (error.code === "conflict" && round < ROUNDS) return pause(round).andThen(() => attempt(round + 1));
        const decided = last;
        if (!AMBIGUOUS.has(error.code) || !decided) return errAsync(error);
        return readLedger(docs, key)
          .orElse(() => errAsync(error))
          .andThen((ledger) => (landed(ledger, decided.outcome) ? okAsync(decided.outcome) : errAsync(error)));
      });
  return attempt(1);
}

/**
 * The fold of a known ledger: when the close log's last seq is still the known one, the closes
 * after the ledger's fold are the known ones (no read); otherwise the log is read as usual.
 */
function foldKnown(logs: LogStore | undefined, key: readonly string[], known: KnownLedger): ResultAsync<FoldedLedger, KeelError> {
  if (!logs) return foldLogged(logs, key, known.stored);
  return logs.head([...key]).andThen((head) =>
    (head?.lastSeq ?? 0) === known.logSeq
      ? okAsync({ ...decideFold(known.stored, known.closes), logSeq: known.logSeq })
      : foldLogged(logs, key, known.stored),
  );
}

function pause(round: number): ResultAsync<void, never> {
  const ms = Math.random() * Math.min(2 ** round, 100);
  return ResultAsync.fromSafePromise(new Promise<void>((resolve) => setTimeout(resolve, ms)));
}
