import { KeelError, digest, newId, type JsonObject, validate } from "@keel/core";
import type { Fence, Key, LogStore } from "@keel/store";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { RunIdSchema, type MismatchPolicy } from "./engine-requests.js";
import { z } from "zod";

/** What a journaled call was: enough to tell whether a new call is the same one. */
export interface JournalCall {
  stage: string;
  skill: string;
  model: string;
  attempt: number;
  /** Digest of the whole prompt (never the prompt itself). */
  promptDigest: string;
}

/** The recorded result of a call. */
export type JournalResult =
  | { ok: true; text: string; tokens: number | null; costMicroUsd: number | null; durationMs: number; /** Set (and `text` empty) when the engine keeps digests only. */ textDigest?: string }
  | { ok: false; code: string; message: string; durationMs: number };

/** One journal record: `{ callIndex, hash, result }`, plus the call it hashes (for a readable diff). */
export interface JournalRecord {
  callIndex: number;
  hash: string;
  call: JournalCall;
  result: JournalResult;
}

/**
 * A record of the journal log: a call record, a call record that also commits the run's new
 * state (`commit`: the last call of a step), or a commit alone (a step that made no call, a
 * checkpoint, an abort). The run's state is its latest commit, or the run document when there is none.
 */
export type JournalEntry = (JournalRecord & { commit?: JsonObject }) | { commit: JsonObject };

/** Options of {@link appendJournal}. */
export interface AppendJournalOptions {
  /** The journal's last seq as read (the run's state at that seq): a different one is `conflict`. */
  expectedSeq?: number;
  /** The run lease's fence: an append after the lease was lost is `lease_lost`. */
  fence?: Fence;
}

const LogsSchema = z.custom<LogStore>((value) => typeof (value as LogStore | undefined)?.append === "function" && typeof (value as LogStore).read === "function", "logs must be a store's log port (store.logs)");
const ReadInputSchema = z.strictObject({ logs: LogsSchema, runId: RunIdSchema });
const JournalResultSchema = z.union([
  z.strictObject({ ok: z.literal(true), text: z.string(), tokens: z.number().nullable(), costMicroUsd: z.number().nullable(), durationMs: z.number().nonnegative(), textDigest: z.string().max(80).optional() }),
  z.strictObject({ ok: z.literal(false), code: z.string(), message: z.string(), durationMs: z.number().nonnegative() }),
]);
const JournalRecordShape = {
  callIndex: z.number().int().nonnegative(),
  hash: z.string().min(1),
  call: z.strictObject({ stage: z.string(), skill: z.string(), model: z.string(), attempt: z.number().int().nonnegative(), promptDigest: z.string() }),
  result: JournalResultSchema,
};
const CommitSchema = z.record(z.string(), z.unknown());
const AppendInputSchema = z.strictObject({
  logs: LogsSchema,
  runId: RunIdSchema,
  record: z.union([z.strictObject({ ...JournalRecordShape, commit: CommitSchema.optional() }), z.strictObject({ commit: CommitSchema })]),
  options: z.strictObject({
    expectedSeq: z.number().int().nonnegative().optional(),
    fence: z.strictObject({ lease: z.string().min(1), token: z.number().int().nonnegative() }).optional(),
  }),
});

/** The journal log of a run. */
export function journalKey(runId: string): Key {
  return ["workflow-journal", runId];
}

/** The hash of a call: what must be equal for a recorded result to be reused. */
export function callHash(call: JournalCall): string {
  return digest(call);
}

/**
 * Reads a run's journal (`invalid_input` for a run id that is not a safe name): the latest record per call index (a `rerun` appends a newer record
 * for the same index, which then wins).
 */
export function readJournal(logs: LogStore, runId: string): ResultAsync<Map<number, JournalRecord>, KeelError> {
  const checked = validate(ReadInputSchema, { logs, runId }, "journal read");
  if (checked.isErr()) return errAsync(checked.error);
  return logs.read(journalKey(runId)).andThen((records) => {
    const byIndex = new Map<number, JournalRecord>();
    for (const record of records) {
      const value = record.value as unknown as JournalRecord;
      if (isCommitOnly(record.value)) continue;
      if (typeof value !== "object" || value === null || typeof value.callIndex !== "number" || typeof value.hash !== "string") {
        return errAsync(new KeelError("corrupt", `journal record ${record.seq} of run ${runId} is not a journal record`, { details: { location: `${journalKey(runId).join("/")}#${record.seq}` } }));
      }
      byIndex.set(value.callIndex, value);
    }
    return okAsync(byIndex);
  });
}

/** Whether a journal log value is a commit without a call. */
export function isCommitOnly(value: unknown): value is { commit: JsonObject } {
  return typeof value === "object" && value !== null && !Array.isArray(value) && "commit" in value && !("callIndex" in value);
}

/**
 * Appends one record (one durable write), conditional on the journal's last seq and the lease
 * when given; resolves the new last seq. `invalid_input` (nothing written) for a run id that is
 * not a safe name, a record that is not a {@link JournalEntry} or options that are not strict.
 */
export function appendJournal(logs: LogStore, runId: string, record: JournalEntry, options: AppendJournalOptions = {}): ResultAsync<number, KeelError> {
  const checked = validate(AppendInputSchema, { logs, runId, record, options }, "journal append");
  if (checked.isErr()) return errAsync(checked.error);
  const id = "callIndex" in record ? `c${record.callIndex}-${newId()}` : `s-${newId()}`;
  return logs
    .append(journalKey(runId), [{ id, value: record as unknown as JsonObject }], {
      ...(options.expectedSeq !== undefined ? { expectedSeq: options.expectedSeq } : {}),
      ...(options.fence ? { fence: options.fence } : {}),
    })
    .map((appended) => appended.lastSeq);
}

/** How a call relates to the journal. */
export type ReplayDecision =
  | { kind: "reuse"; record: JournalRecord }
  | { kind: "live"; reason: "missing" | "empty_result" | "prefix_ended" | "rerun" | "not_retained" }
  | { kind: "mismatch"; policy: Exclude<MismatchPolicy, "rerun">; diff: string[] };

/**
 * Decides, purely, whether a call's result comes from the journal. Results are reused up to
 * the first mismatch: a missing record, a changed call or an empty text result ends the
 * reusable prefix (`prefixOpen` false from then on), and later calls run live; so does a
 * record that keeps only its answer's digest (`not_retained`: an engine with `retention: "digests"`). A changed call
 * follows the policy: `pause` (default) and `fail` stop with a readable diff, `rerun` runs live.
 */
export function decideReplay(call: JournalCall, record: JournalRecord | undefined, prefixOpen: boolean, policy: MismatchPolicy): ReplayDecision {
  if (!prefixOpen) return { kind: "live", reason: "prefix_ended" };
  if (!record) return { kind: "live", reason: "missing" };
  // A record that keeps the answer's digest only cannot give the answer back: the call is not reusable.
  if (record.result.ok && record.result.textDigest !== undefined) return { kind: "live", reason: "not_retained" };
  if (record.hash !== callHash(call)) {
    if (policy === "rerun") return { kind: "live", reason: "rerun" };
    return { kind: "mismatch", policy, diff: describeDiff(record.call, call) };
  }
  if (record.result.ok && record.result.text.length === 0) return { kind: "live", reason: "empty_result" };
  return { kind: "reuse", record };
}

/** A readable diff of a recorded call against the one about to be made: one line per field that differs. */
export function describeDiff(expected: JournalCall, actual: JournalCall): string[] {
  const lines: string[] = [];
  for (const field of ["stage", "skill", "model", "attempt", "promptDigest"] as const) {
    if (expected[field] !== actual[field]) lines.push(`${field}: recorded ${JSON.stringify(expected[field])}, now ${JSON.stringify(actual[field])}`);
  }
  return lines.length > 0 ? lines : ["hash differs (the call was recorded by another version of the engine)"];
}
