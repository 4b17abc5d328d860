import { KeelError, type Clock, type EventBus, type JsonObject } from "@keel/core";
import type { Budget, BudgetScope, Limits } from "@keel/budget";
import type { Doc, Fence, Key, KeelStore } from "@keel/store";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import type { Catalog } from "../catalog.js";
import type { MismatchPolicy } from "../engine-requests.js";
import type { Model, RoutingPreference } from "../model-select.js";
import type { RunDoc } from "../run-state.js";
import type { ExecuteStage } from "../stage-execute.js";

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
  maxRetainedRuns: number;
  routingDigest: string;
}

/** The run document's key. */
export const runKey = (runId: string): Key => ["workflow-runs", runId];
/** The task document's key (identity and runs of one task id). */
export const taskKey = (taskId: string): Key => ["workflow-tasks", taskId];
/** The retained-run counter. */
export const indexKey: Key = ["workflow-index", "runs"];
/** The lease of a run. */
export const leaseName = (runId: string) => `wr.${runId}`;

/** Reads a run; `not_found` when there is none, `corrupt` when it is not a run document. */
export function readRun(context: EngineContext, runId: string): ResultAsync<Doc<RunDoc>, KeelError> {
  return context.store.docs.get(runKey(runId)).andThen((doc) => {
    if (!doc) return errAsync(new KeelError("not_found", `no workflow run ${runId}: start one with start(task)`, { details: { runId } }));
    const value = doc.value as unknown as RunDoc;
    if (typeof value !== "object" || value === null || value.schemaVersion !== 1 || value.runId !== runId || typeof value.version !== "number" || !Array.isArray(value.stages)) {
      return errAsync(new KeelError("corrupt", `run document ${runId} is not a workflow run of schema version 1`, { details: { location: runKey(runId).join("/") } }));
    }
    return okAsync(doc as unknown as Doc<RunDoc>);
  });
}

/** Writes a run over the document version it was read at (one durable write); a lost race is `conflict`. */
export function writeRun(context: EngineContext, doc: Doc<RunDoc>, next: RunDoc, fence?: Fence): ResultAsync<RunDoc, KeelError> {
  return context.store.docs
    .put(runKey(next.runId), next as unknown as JsonObject, { expectedVersion: doc.version, ...(fence ? { fence } : {}) })
    .map(() => next)
    .mapErr((error) =>
      error.code === "conflict"
        ? new KeelError("conflict", `run ${next.runId} changed while this call ran (another step, checkpoint or abort won): read its status and decide again`, {
            details: { runId: next.runId, reason: "stale_version" },
            cause: error,
            retryable: false,
          })
        : error,
    );
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
