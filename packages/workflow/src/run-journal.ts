import { KeelError, digest, newId, type JsonObject } from "@keel/core";
import type { Fence, Key, LogStore } from "@keel/store";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import type { MismatchPolicy } from "./engine-requests.js";

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
  | { ok: true; text: string; tokens: number | null; costMicroUsd: number | null; durationMs: number }
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

/** The journal log of a run. */
export function journalKey(runId: string): Key {
  return ["workflow-journal", runId];
}

/** The hash of a call: what must be equal for a recorded result to be reused. */
export function callHash(call: JournalCall): string {
  return digest(call);
}

/**
 * Reads a run's journal: the latest record per call index (a `rerun` appends a newer record
 * for the same index, which then wins).
 */
export function readJournal(logs: LogStore, runId: string): ResultAsync<Map<number, JournalRecord>, KeelError> {
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

/** Appends one record (one durable write), conditional on the journal's last seq and the lease when given; resolves the new last seq. */
export function appendJournal(logs: LogStore, runId: string, record: JournalEntry, options: AppendJournalOptions = {}): ResultAsync<number, KeelError> {
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
  | { kind: "live"; reason: "missing" | "empty_result" | "prefix_ended" | "rerun" }
  | { kind: "mismatch"; policy: Exclude<MismatchPolicy, "rerun">; diff: string[] };

/**
 * Decides, purely, whether a call's result comes from the journal. Results are reused up to
 * the first mismatch: a missing record, a changed call or an empty text result ends the
 * reusable prefix (`prefixOpen` false from then on), and later calls run live. A changed call
 * follows the policy: `pause` (default) and `fail` stop with a readable diff, `rerun` runs live.
 */
export function decideReplay(call: JournalCall, record: JournalRecord | undefined, prefixOpen: boolean, policy: MismatchPolicy): ReplayDecision {
  if (!prefixOpen) return { kind: "live", reason: "prefix_ended" };
  if (!record) return { kind: "live", reason: "missing" };
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
