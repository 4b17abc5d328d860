import { KeelError, type Clock, type EventBus, type JsonObject } from "@keel/core";
import type { Budget, BudgetScope, Limits } from "@keel/budget";
import type { Fence, Key, KeelStore, LogStore } from "@keel/store";
import { err, errAsync, ok, okAsync, ResultAsync, type Result } from "neverthrow";
import type { Catalog } from "../catalog.js";
import type { MismatchPolicy } from "../engine-requests.js";
import type { Model, RoutingPreference } from "../model-select.js";
import { appendJournal, journalKey, type JournalEntry, type JournalRecord } from "../run-journal.js";
import type { RunDoc } from "../run-state.js";
import type { ExecuteStage } from "../stage-execute.js";
import type { Retention } from "../evidence-retention.js";

/** What every engine operation shares. */
export interface EngineContext {
  store: KeelStore;
  catalog: Catalog;
  budget: Budget;
  events: EventBus | undefined;
  executeStage: ExecuteStage;
  models: Model[];
  preference: RoutingPreference;
  globalLimits: Limits;
  globalScope: BudgetScope | undefined;
  sourceRoot: string | undefined;
  clock: Clock;
  leaseTtlMs: number;
  onMismatch: MismatchPolicy;
  retainPacketContents: boolean;
  retention: Retention;
  maxRetainedRuns: number;
  routingDigest: string;
}

/** The run document's key. */
export const runKey = (runId: string): Key => ["workflow-runs", runId];
/** The task document's key (identity and runs of one task id). */
export const taskKey = (taskId: string): Key => ["workflow-tasks", taskId];
/** The retained-run counter. */
export const indexKey: Key = ["workflow-index", "runs"];
/** The lease of a run (on the fs store a rename, not fsynced: only its first acquisition creates a directory durably). */
export const leaseName = (runId: string) => `wr.${runId}`;

/** A run as read: its latest state, and the journal seq it was read at (the condition of its next commit). */
export interface RunRead {
  value: RunDoc;
  /** The journal's last seq when read (0 when it has no record): a commit appends over exactly this seq. */
  seq: number;
}

/**
 * Reads a run's latest state: the latest commit of its journal, or the run document (written once,
 * at start) when the journal has none. `not_found` when there is no run, `corrupt` when the
 * document or the commit is not a run. Only the journal's tail is read (the last records first).
 */
export function readRun(context: Pick<EngineContext, "store">, runId: string): ResultAsync<RunRead, KeelError> {
  const { docs, logs } = context.store;
  return docs.get(runKey(runId)).andThen((doc) => {
    if (!doc) return errAsync(new KeelError("not_found", `no workflow run ${runId}: start one with start(task)`, { details: { runId } }));
    const base = asRun(doc.value, runId, runKey(runId).join("/"));
    if (base.isErr()) return errAsync(base.error);
    return logs.head(journalKey(runId)).andThen((head) => {
      if (!head) return okAsync({ value: base.value, seq: 0 });
      return new ResultAsync(latestCommit(logs, runId, head.lastSeq)).andThen((commit) => {
        if (!commit) return okAsync({ value: base.value, seq: head.lastSeq });
        const run = asRun(commit.value, runId, `${journalKey(runId).join("/")}#${commit.seq}`);
        return run.isErr() ? errAsync(run.error) : okAsync({ value: run.value, seq: head.lastSeq });
      });
    });
  });
}

function asRun(value: unknown, runId: string, location: string): Result<RunDoc, KeelError> {
  const run = value as RunDoc;
  if (typeof run !== "object" || run === null || run.schemaVersion !== 1 || run.runId !== runId || typeof run.version !== "number" || !Array.isArray(run.stages)) {
    return err(new KeelError("corrupt", `run state ${location} is not a workflow run of schema version 1`, { details: { location } }));
  }
  return ok(run);
}

/** The latest commit at or before `lastSeq`, read backwards in growing windows (almost always the last record). */
async function latestCommit(logs: LogStore, runId: string, lastSeq: number): Promise<Result<{ value: JsonObject; seq: number } | undefined, KeelError>> {
  let upto = lastSeq;
  for (let window = 4; upto > 0; window *= 4) {
    const from = Math.max(0, upto - window);
    const records = await logs.read(journalKey(runId), { afterSeq: from, limit: upto - from });
    if (records.isErr()) return err(records.error);
    for (let index = records.value.length - 1; index >= 0; index--) {
      const record = records.value[index]!;
      const commit = (record.value as { commit?: unknown } | null)?.commit;
      if (typeof commit === "object" && commit !== null && record.seq <= upto) return ok({ value: commit as JsonObject, seq: record.seq });
    }
    upto = from;
  }
  return ok(undefined);
}

/**
 * Commits a run's next state: one append to its journal over the seq it was read at (with the
 * step's last call record, when given, in the same record), fenced by the run lease when given.
 * A lost race (another step, checkpoint or abort committed first) is `conflict`.
 */
export function writeRun(context: EngineContext, read: RunRead, next: RunDoc, options: { fence?: Fence; call?: JournalRecord } = {}): ResultAsync<RunDoc, KeelError> {
  const entry: JournalEntry = { ...(options.call ?? {}), commit: next as unknown as JsonObject };
  return appendJournal(context.store.logs, next.runId, entry, { expectedSeq: read.seq, ...(options.fence ? { fence: options.fence } : {}) })
    .map(() => next)
    .mapErr((error) => lostRace(next.runId, error));
}

/** A journal append over a seq that moved on (another step, checkpoint or abort committed first): `conflict`, stale version. */
export function lostRace(runId: string, error: KeelError): KeelError {
  if (error.code !== "conflict" && error.code !== "deleted") return error;
  return new KeelError("conflict", `run ${runId} changed while this call ran (another step, checkpoint or abort won): read its status and decide again`, {
    details: { runId, reason: "stale_version" },
    cause: error,
    retryable: false,
  });
}

type RunEventType =
  | "workflow.run.started"
  | "workflow.run.completed"
  | "workflow.run.failed"
  | "workflow.run.paused"
  | "workflow.stage.started"
  | "workflow.stage.completed"
  | "workflow.checkpoint.recorded";

/** An event to emit once the change it reports is committed: ids, version, stage and status only. */
export interface PendingEvent {
  type: RunEventType;
  stage: string | null;
  status: string;
}

/** Emits events after a commit. They carry no prompt, source or note. */
export function emitAll(context: EngineContext, run: RunDoc, events: readonly PendingEvent[]): void {
  if (!context.events) return;
  for (const event of events) context.events.emit({ type: event.type, runId: run.runId, version: run.version, stage: event.stage, status: event.status });
}

/** The event that reports where a run now stands. */
export function stateEvent(run: RunDoc): PendingEvent {
  const stage = run.stages[run.position]?.id ?? null;
  switch (run.status) {
    case "completed":
      return { type: "workflow.run.completed", stage, status: run.status };
    case "rejected":
    case "aborted":
    case "handed_off":
    case "failed":
      return { type: "workflow.run.failed", stage, status: run.status };
    default:
      return { type: "workflow.run.paused", stage, status: run.status };
  }
}

/** The budget scope of a task: its id is derived from the task id, so a restart never resets what was spent. */
export function taskScope(context: EngineContext, run: Pick<RunDoc, "taskId" | "plan">): BudgetScope {
  return context.budget.scope(`wt-${run.taskId}`, {
    limits: [
      { name: "workflow", limits: run.plan.limits.workflow },
      { name: "profile", limits: run.plan.limits.profile },
    ],
    ...(context.globalScope ? { parents: [context.globalScope] } : {}),
  });
}
