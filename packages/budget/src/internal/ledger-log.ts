import { KeelError, newId, validate, type JsonValue } from "@keel/core";
import type { LogRecord, LogStore } from "@keel/store";
import { err, errAsync, ok, okAsync, type Result, type ResultAsync } from "neverthrow";
import { z } from "zod";
import { AmountSchema } from "../budget-dimensions.js";
import { decideFold, type ActualAmounts, type LoggedClose } from "./ledger-rules.js";
import type { ClosedOutcome, ClosedReservation, Ledger } from "./ledger-schema.js";

/**
 * The close log: one record per closed reservation (its id is the reservation id), appended by
 * settle, abandon and expire. The store keeps one record per id, so the first close of a
 * reservation wins and any other is `conflict`. Reserve and expire fold the records after the
 * ledger's `foldedSeq` into its totals on their compare-and-swap write; every read folds them
 * in too, so a close counts from the moment it is appended.
 */
const CloseRecordSchema = z.strictObject({
  outcome: z.enum(["settled", "abandoned", "expired"]),
  actual: z.strictObject({
    tokens: AmountSchema.nullable().optional(),
    timeMs: AmountSchema.nullable().optional(),
    costMicroUsd: AmountSchema.nullable().optional(),
  }),
  at: z.number(),
  /** Tells this close's own retry (same value: deduplicated) from another close (conflict). */
  attempt: z.string(),
});

/** Failures after which an append may or may not have happened. */
const AMBIGUOUS = new Set(["io_failed", "unavailable", "timeout"]);

function parseClose(record: LogRecord, location: string): Result<LoggedClose, KeelError> {
  const parsed = validate(CloseRecordSchema, record.value, "budget close record");
  if (parsed.isErr()) {
    return err(new KeelError("corrupt", `budget close log ${location} has an invalid record ${record.id}: ${parsed.error.message}`, { details: { location, id: record.id } }));
  }
  return ok({ id: record.id, seq: record.seq, outcome: parsed.value.outcome, actual: parsed.value.actual as ActualAmounts, at: parsed.value.at });
}

/** The closes logged after `afterSeq`, in seq order. */
export function readCloses(logs: LogStore, key: readonly string[], afterSeq: number): ResultAsync<LoggedClose[], KeelError> {
  const location = key.join("/");
  return logs.read([...key], { afterSeq }).andThen((records) => {
    const closes: LoggedClose[] = [];
    for (const record of records) {
      const parsed = parseClose(record, location);
      if (parsed.isErr()) return err(parsed.error);
      closes.push(parsed.value);
    }
    return ok(closes);
  });
}

/**
 * The closes not yet folded into `ledger`: those after `foldedSeq`, read from the record the
 * ledger names as its last folded one (`foldedSeq`, `foldedId`) on. When that record is not
 * there, the log lost records after the fold (a power loss took back buffered appends) and the
 * seqs after it may hold other closes now: then every close of the log is returned, and the
 * fold counts those whose reservation is still open in the ledger.
 */
export function unfoldedCloses(logs: LogStore, key: readonly string[], ledger: Ledger): ResultAsync<LoggedClose[], KeelError> {
  const foldedSeq = ledger.foldedSeq ?? 0;
  if (foldedSeq === 0 || ledger.foldedId === undefined) return readCloses(logs, key, foldedSeq);
  return readCloses(logs, key, foldedSeq - 1).andThen((closes) => {
    const anchor = closes[0];
    if (anchor && anchor.seq === foldedSeq && anchor.id === ledger.foldedId) return okAsync(closes.slice(1));
    return readCloses(logs, key, 0);
  });
}

/**
 * A ledger with the closes logged after it folded in, and the close log's last seq as this fold
 * saw it (`logSeq`: the last close read, else the ledger's `foldedSeq`, else 0). A `logSeq`
 * that is wrong (the log lost records) only makes an append under `expectedSeq: logSeq` fail.
 */
export type FoldedLedger = ReturnType<typeof decideFold> & { logSeq: number };

/** Folds the closes not yet folded (see {@link unfoldedCloses}) into `ledger` (a copy; unchanged when there are none). */
export function foldLogged(logs: LogStore | undefined, key: readonly string[], ledger: Ledger | undefined): ResultAsync<FoldedLedger, KeelError> {
  if (!logs || !ledger) return okAsync({ ledger, folded: [], thresholds: [], logSeq: ledger?.foldedSeq ?? 0 });
  return unfoldedCloses(logs, key, ledger).map((closes) => ({ ...decideFold(ledger, closes), logSeq: closes.at(-1)?.seq ?? ledger.foldedSeq ?? 0 }));
}

/** Finds the logged close of reservation `id` (a scan of the log: only on the error path). */
export function findClose(logs: LogStore, key: readonly string[], id: string, scope: string): ResultAsync<ClosedReservation | undefined, KeelError> {
  return readCloses(logs, key, 0).map((closes) => {
    const close = closes.find((entry) => entry.id === id);
    return close ? { id, scope, outcome: close.outcome, at: close.at } : undefined;
  });
}

/**
 * How an append of a close ended. `appended.seq` is the seq of the close when this call added it
 * (`undefined` when a retry found it there already).
 */
export type AppendedClose = { kind: "appended"; seq: number | undefined } | { kind: "taken" };

/**
 * Appends the close of reservation `id`: one write, durable unless `buffered` (then
 * `durable: false`: the store syncs it soon after, and a power loss before may take it back).
 * `appended` when this close is in the log (also after an ambiguous failure whose retry finds
 * its own record), `taken` when another close of `id` is there first.
 */
export function appendClose(
  logs: LogStore,
  key: readonly string[],
  id: string,
  close: { outcome: ClosedOutcome; actual: ActualAmounts; at: number },
  buffered = false,
): ResultAsync<AppendedClose, KeelError> {
  const value = { outcome: close.outcome, actual: { ...close.actual }, at: close.at, attempt: newId() } as unknown as JsonValue;
  const options = buffered ? { durable: false } : undefined;
  const once = (): ResultAsync<AppendedClose, KeelError> =>
    logs
      .append([...key], [{ id, value }], options)
      .map((appended): AppendedClose => ({ kind: "appended", seq: appended.appended === 1 ? appended.lastSeq : undefined }))
      .orElse((error) => (error.code === "conflict" ? okAsync<AppendedClose, KeelError>({ kind: "taken" }) : errAsync(error)));
  return once().orElse((error) => (AMBIGUOUS.has(error.code) ? once() : errAsync(error)));
}
