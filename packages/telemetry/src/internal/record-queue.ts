import { KeelError, type JsonValue } from "@keel/core";
import type { LogRecordInput } from "@keel/store";
import { errAsync, okAsync, ResultAsync } from "neverthrow";

/** Who is told when a record fails: `caller` (from `append()`, gets the error) or `bus` (kept and retried). */
export type RecordOwner = "caller" | "bus";

/** One queued record and what became of it. */
export interface QueuedRecord {
  record: LogRecordInput;
  owner: RecordOwner;
  state: "pending" | "written" | "failed";
  error?: KeelError;
}

/** An ordered, batching write queue in front of a `LogStore` log. */
export interface RecordQueue {
  /** Queues a record (an id already queued returns the queued one) and starts writing. */
  push(id: string, value: JsonValue, owner: RecordOwner): QueuedRecord;
  /** Waits for a record written by `push(…, "caller")`; a record still blocked is handed back as failed. */
  waitFor(entry: QueuedRecord): ResultAsync<void, KeelError>;
  /** Remembers a failure to report at the next flush (an event the bus gave that was invalid). */
  fail(error: KeelError): void;
  /** Writes what is queued (trying twice) and reports the first failure since the last flush. */
  flush(): ResultAsync<void, KeelError>;
}

/** Codes after which a record can never be written: it is dropped and reported, not retried. */
const NEVER_WRITABLE: ReadonlySet<string> = new Set(["too_large", "invalid_input", "conflict"]);

const blocked = () => new KeelError("unavailable", "the event log could not be written now; retry the append");

/**
 * Creates a {@link RecordQueue}. Records are written in push order, `batchSize` at a time. When a
 * batch fails with an error that may concern one record (`too_large`, …), its records are retried
 * one by one and only the unwritable ones are dropped. When it fails otherwise, the bus's records
 * stay at the head of the queue for the next push or flush; a caller's record fails at once.
 */
export function createRecordQueue(
  write: (records: LogRecordInput[]) => ResultAsync<unknown, KeelError>,
  options: { batchSize: number; location: string },
): RecordQueue {
  let pending: QueuedRecord[] = [];
  const byId = new Map<string, QueuedRecord>();
  let draining: Promise<void> | undefined;
  let failure: KeelError | undefined;
  let dropped: string[] = [];

  const settle = (entry: QueuedRecord, error?: KeelError) => {
    byId.delete(entry.record.id);
    if (!error) {
      entry.state = "written";
      return;
    }
    entry.state = "failed";
    entry.error = error;
    if (entry.owner === "bus") {
      failure ??= error;
      dropped.push(entry.record.id);
    }
  };
  const prune = () => {
    pending = pending.filter((entry) => entry.state === "pending");
  };

  /** Writes a failed batch one record at a time; false when the store failed as a whole. */
  const writeEach = async (batch: QueuedRecord[]): Promise<boolean> => {
    for (const entry of batch) {
      const result = await write([entry.record]);
      if (result.isOk()) settle(entry);
      else if (NEVER_WRITABLE.has(result.error.code) || entry.owner === "caller") settle(entry, result.error);
      else {
        failure ??= result.error;
        return false;
      }
    }
    return true;
  };

  const drainOnce = async (): Promise<void> => {
    while (pending.length > 0) {
      const batch = pending.slice(0, options.batchSize);
      const result = await write(batch.map((entry) => entry.record));
      if (result.isOk()) batch.forEach((entry) => settle(entry));
      else if (NEVER_WRITABLE.has(result.error.code) && batch.length > 1) {
        const wentOn = await writeEach(batch);
        prune();
        if (!wentOn) return;
      } else {
        const error = result.error;
        for (const entry of batch) if (entry.owner === "caller" || NEVER_WRITABLE.has(error.code)) settle(entry, error);
        if (batch.some((entry) => entry.state === "pending")) failure ??= error;
      }
      prune();
      if (batch.some((entry) => entry.state === "pending")) return;
    }
  };

  const drain = (): Promise<void> => {
    draining ??= drainOnce().finally(() => {
      draining = undefined;
    });
    return draining;
  };

  return {
    push(id, value, owner) {
      const queued = byId.get(id);
      if (queued) return queued;
      const entry: QueuedRecord = { record: { id, value }, owner, state: "pending" };
      byId.set(id, entry);
      pending.push(entry);
      void drain();
      return entry;
    },
    waitFor(entry) {
      return ResultAsync.fromSafePromise(drain()).andThen(() => {
        if (entry.state === "written") return okAsync(undefined);
        if (entry.state === "pending") {
          // Blocked behind records that failed: hand it back to the caller, who owns the retry.
          settle(entry, failure ?? blocked());
          prune();
        }
        return errAsync(entry.error ?? blocked());
      });
    },
    fail(error) {
      failure ??= error;
    },
    flush() {
      return ResultAsync.fromSafePromise(drain().then(() => (pending.length > 0 ? drain() : undefined))).andThen(() => {
        const first = failure;
        const lost = dropped;
        failure = undefined;
        dropped = [];
        if (!first && pending.length === 0) return okAsync(undefined);
        const reason = first ?? blocked();
        return errAsync(
          new KeelError(reason.code, `recording events failed: ${reason.message}`, {
            details: { log: options.location, pending: pending.length, dropped: lost },
            retryable: pending.length > 0,
            cause: reason,
          }),
        );
      });
    },
  };
}
