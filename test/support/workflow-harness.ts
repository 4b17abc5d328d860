import { createEventBus, createManualClock, KeelError, type KeelEvent, type ManualClock } from "@keel/core";
import { createBudget, type Limits } from "@keel/budget";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { err, ok, type Result } from "neverthrow";
import { createCatalog, createWorkflowEngine, type Catalog, type DefinitionSet, type ExecuteStage, type ModelInput, type StageCall, type StageResult, type WorkflowEngineOptions } from "@keel/workflow";

/** A registry with one model per tier. */
export const MODELS: ModelInput[] = [
  { id: "local-small", strength: 30, contextWindow: 32_000, location: "installed", latencyMs: 200, tier: "light", capabilities: [] },
  { id: "local-medium", strength: 50, contextWindow: 64_000, location: "installed", latencyMs: 400, tier: "medium", capabilities: [] },
  { id: "remote-large", strength: 75, contextWindow: 200_000, location: "remote", latencyMs: 2000, tier: "large", reviewed: true, capabilities: [] },
  { id: "remote-max", strength: 95, contextWindow: 400_000, location: "remote", latencyMs: 5000, tier: "maximum", reviewed: true, capabilities: [] },
];

/** A scripted stage executor: answers from the call, records every call, can fail on demand. */
export function scriptedExecutor(options: { fail?: (call: StageCall) => KeelError | undefined; text?: (call: StageCall) => string } = {}) {
  const calls: StageCall[] = [];
  const executeStage: ExecuteStage = async (call): Promise<Result<StageResult, KeelError>> => {
    calls.push(call);
    const failure = options.fail?.(call);
    if (failure) return err(failure);
    const text = options.text?.(call) ?? `${call.stage}/${call.skill} by ${call.model.id}: findings for attempt ${call.attempt}`;
    return ok({ text, tokens: 100, durationMs: 50 });
  };
  return { calls, executeStage };
}

/** An engine over a memory store with a manual clock. */
export function makeEngine(
  overrides: Partial<WorkflowEngineOptions> & { definitions?: DefinitionSet; limits?: Limits } = {},
): {
  engine: ReturnType<typeof createWorkflowEngine>;
  store: KeelStore;
  clock: ManualClock;
  catalog: Catalog;
  calls: StageCall[];
  events: KeelEvent[];
  options: WorkflowEngineOptions;
} {
  const clock = (overrides.clock as ManualClock | undefined) ?? createManualClock();
  const store = overrides.store ?? createMemoryStore({ clock });
  const { definitions, ...rest } = overrides;
  const catalog = overrides.catalog ?? createCatalog(definitions ?? {})._unsafeUnwrap();
  const bus = createEventBus({ clock });
  const events: KeelEvent[] = [];
  bus.on("*", (event) => events.push(event));
  const scripted = scriptedExecutor();
  const options: WorkflowEngineOptions = {
    store,
    catalog,
    budget: createBudget({ store, clock }),
    events: bus,
    executeStage: scripted.executeStage,
    models: MODELS,
    clock,
    ...rest,
  };
  return { engine: createWorkflowEngine(options), store, clock, catalog, calls: scripted.calls, events, options };
}

/** A review task with a diff. */
export const reviewTask = (taskId = "task-1", extra: Record<string, unknown> = {}) => ({
  taskId,
  objective: "review the parser change",
  workflow: "review_change",
  risk: "low" as const,
  complexity: "small" as const,
  evidence: { diff: "--- a/x.ts\n+++ b/x.ts\n@@\n-old\n+new\n", validationStatus: "passed" as const },
  ...extra,
});

/** An issue task. */
export const issueTask = (taskId = "issue-1", extra: Record<string, unknown> = {}) => ({
  taskId,
  objective: "fix the off-by-one in the pager",
  workflow: "implement_issue",
  risk: "medium" as const,
  complexity: "medium" as const,
  evidence: { context: "the pager skips the last item" },
  ...extra,
});
