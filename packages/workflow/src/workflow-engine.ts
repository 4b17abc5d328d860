import { KeelError, canonicalJson, digest, newId, systemClock, utf8Bytes, type Clock, type EventBus, type JsonObject, validate } from "@keel/core";
import type { Budget, Limits } from "@keel/budget";
import { LimitsSchema } from "@keel/budget/schemas";
import type { KeelStore } from "@keel/store";
import { keelStoreSchema } from "@keel/store/kit";
import { err, errAsync, okAsync, ResultAsync, type Result } from "neverthrow";
import { z } from "zod";
import type { Catalog } from "./catalog.js";
import {
  AbortBodySchema,
  CheckpointBodySchema,
  MismatchPolicySchema,
  RunIdSchema,
  StepBodySchema,
  TaskSchema,
  type AbortBodyInput,
  type CheckpointBodyInput,
  type HandoffPacket,
  type MismatchPolicy,
  type StepBodyInput,
  type TaskInput,
} from "./engine-requests.js";
import { EVIDENCE_LIMITS, intakeEvidence, type EvidenceSnapshot } from "./evidence.js";
import { RETENTIONS, holdEvidence, mergeHeld, type Retention } from "./evidence-retention.js";
import { ModelRegistrySchema, type ModelInput, type RoutingPreference } from "./model-select.js";
import { RESPONSE_LIMITS } from "./response-bounds.js";
import { decideAbort, decideCheckpoint, isTerminal, type RunDoc, type TaskIdentity } from "./run-state.js";
import { buildStatus, type LeaseStatus, type RunStatus } from "./run-status.js";
import type { ExecuteStage } from "./stage-execute.js";
import type { PlannedStage } from "./workflow-plan.js";
import { emitAll, indexKey, leaseName, readRun, runKey, stateEvent, taskKey, taskScope, writeRun, type EngineContext } from "./internal/engine-context.js";
import { planTask, type PlannedRouting } from "./internal/engine-plan.js";
import { stepRun, type StepReport } from "./internal/engine-step.js";
import type { RanCall } from "./internal/stage-run.js";

export type { PlannedRouting } from "./internal/engine-plan.js";
export type { RanCall } from "./internal/stage-run.js";

/** Options of {@link createWorkflowEngine}. */
export interface WorkflowEngineOptions {
  /** Runs, tasks and journals live here (a run's document at start, its later states as commits in its journal); the lease of each run too. */
  store: KeelStore;
  /** The validated definitions (`createCatalog` / `loadCatalog`). */
  catalog: Catalog;
  /** The budget ledger (`createBudget`) over which workflow, profile and global limits intersect. */
  budget: Budget;
  /** Receives `workflow.run.*`, `workflow.stage.*` and `workflow.checkpoint.*` (ids, version, stage, status only). */
  events?: EventBus;
  /** The host's call of one stage's skill on a model. */
  executeStage: ExecuteStage;
  /** The model registry routing chooses from. */
  models: ModelInput[];
  /** Candidate order: `balanced` (default) or `quality`. */
  preference?: RoutingPreference;
  /** Global budget limits, shared by every run of this engine (one ledger document). */
  limits?: Limits;
  /** The source root evidence files are read from (and re-fingerprinted before each step). */
  sourceRoot?: string;
  /** Time of records and leases (default the system clock; use the store's). */
  clock?: Clock;
  /** The run lease's time to live, renewed while a step runs (default 30,000 ms). */
  leaseTtlMs?: number;
  /** Journal mismatch policy (default `pause`). */
  onMismatch?: MismatchPolicy;
  /** Keep packet contents in the run's state (default false: digests only; contents are rebuilt from the journal or passed back). Not with `retention: "digests"`. */
  retainPacketContents?: boolean;
  /**
   * What the store keeps of evidence and answers (default `full`): `full` keeps them, so callers
   * keep nothing; `digests` keeps their digests only, never raw text or source excerpts, and
   * callers pass evidence and packets back (checked against the digests). A run keeps the mode it
   * was started with.
   */
  retention?: Retention;
  /** New runs are refused past this many retained runs (default 5,000). */
  maxRetainedRuns?: number;
}

/** What `plan` answers: the stages (skipped ones marked), the roles and a first look at routing. Nothing is written. */
export interface PlanResponse {
  workflow: string;
  profile: string | null;
  stages: (Pick<PlannedStage, "id" | "kind" | "skills" | "reads" | "final"> & { role: string | null; status: "pending" | "skipped"; skipReason?: string; routing?: PlannedRouting })[];
  roles: string[];
  maxCorrections: number;
  authorityDocuments: string[];
}

/** What `step` answers (at most 40,000 bytes; packets that would pass it are left out, their digests kept). */
export interface StepResponse {
  status: RunStatus;
  ran: RanCall[];
  recovered: StepReport["recovered"];
  omittedPackets: number;
}

/** The workflow engine. Every mutation takes the run's latest `version`; a stale one is `conflict` and changes nothing. */
export interface WorkflowEngine {
  /**
   * Resolves a task's workflow without writing anything. It refuses what `start` would refuse
   * for a new run: the same task schema, and the same evidence intake (`intakeEvidence`: a file
   * outside the source root, missing, not regular, past its end, or over the size limits).
   */
  plan(task: TaskInput): ResultAsync<PlanResponse, KeelError>;
  /** Starts a run for a task (or returns the live run of the same task id, unchanged). */
  start(task: TaskInput): ResultAsync<RunStatus, KeelError>;
  /** Runs local stages until a checkpoint, a handoff or an end. */
  step(runId: string, body: StepBodyInput): ResultAsync<StepResponse, KeelError>;
  /** The supervisor's decision at a checkpoint: accept, reject, revise or abort. */
  checkpoint(runId: string, body: CheckpointBodyInput): ResultAsync<RunStatus, KeelError>;
  /** The run's bounded status. */
  status(runId: string): ResultAsync<RunStatus, KeelError>;
  /** Ends a run that has not ended. */
  abort(runId: string, body: AbortBodyInput): ResultAsync<RunStatus, KeelError>;
}

const OptionsSchema = z.strictObject({
  store: keelStoreSchema(),
  catalog: z.custom<Catalog>((value) => typeof (value as Catalog | undefined)?.digest === "string" && (value as Catalog).workflows instanceof Map, "catalog must come from createCatalog or loadCatalog"),
  budget: z.custom<Budget>((value) => typeof (value as Budget | undefined)?.scope === "function", "budget must come from createBudget"),
  events: z.custom<EventBus>((value) => typeof (value as EventBus | undefined)?.emit === "function", "events must be an EventBus").optional(),
  executeStage: z.custom<ExecuteStage>((value) => typeof value === "function", "executeStage must be a function"),
  models: ModelRegistrySchema,
  preference: z.enum(["balanced", "quality"]).optional(),
  limits: LimitsSchema.optional(),
  sourceRoot: z.string().min(1).optional(),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
  leaseTtlMs: z.number().int().min(100).max(3_600_000).optional(),
  onMismatch: MismatchPolicySchema.optional(),
  retainPacketContents: z.boolean().optional(),
  retention: z.literal(RETENTIONS).optional(),
  maxRetainedRuns: z.number().int().min(1).max(1_000_000).optional(),
});

/**
 * Creates the workflow engine over a store, a validated catalog and a budget. Stages run
 * through the host's `executeStage`; the supervisor is whoever calls `checkpoint`.
 *
 * @throws KeelError `invalid_input` for malformed options (a programmer error).
 *
 * @example
 * ```ts
 * const engine = createWorkflowEngine({ store, catalog, budget, models, executeStage });
 * const run = await engine.start({ taskId: "t1", objective: "review the change", workflow: "review_change", evidence: { diff } });
 * if (run.isOk()) {
 *   const step = await engine.step(run.value.runId, { version: run.value.version });
 *   // ... then engine.checkpoint(runId, { version, action: "accept", acknowledgeUnverifiedChecks: true })
 * }
 * ```
 */
export function createWorkflowEngine(options: WorkflowEngineOptions): WorkflowEngine {
  const parsed = validate(OptionsSchema, options, "workflow engine options");
  if (parsed.isErr()) throw parsed.error;
  const valid = parsed.value;
  if (valid.retention === "digests" && valid.retainPacketContents === true) {
    throw new KeelError("invalid_input", 'retainPacketContents keeps packet text in the store, which retention "digests" forbids: choose one', { details: { what: "workflow engine options" } });
  }
  const globalLimits = valid.limits ?? {};
  const context: EngineContext = {
    store: valid.store,
    catalog: valid.catalog,
    budget: valid.budget,
    events: valid.events,
    executeStage: valid.executeStage,
    models: valid.models,
    preference: valid.preference ?? "balanced",
    globalLimits,
    globalScope: Object.keys(globalLimits).length > 0 ? valid.budget.scope("workflow-global", { limits: [{ name: "global", limits: globalLimits }] }) : undefined,
    sourceRoot: valid.sourceRoot,
    clock: valid.clock ?? systemClock,
    leaseTtlMs: valid.leaseTtlMs ?? 30_000,
    onMismatch: valid.onMismatch ?? "pause",
    retainPacketContents: valid.retainPacketContents ?? false,
    retention: valid.retention ?? "full",
    maxRetainedRuns: valid.maxRetainedRuns ?? 5000,
    routingDigest: digest({ models: valid.models, preference: valid.preference ?? "balanced" }),
  };
  return Object.freeze({
    plan: (task: TaskInput) =>
      parseRequest(TaskSchema, task, "task")
        .asyncAndThen((valid) => intakeEvidence(valid.evidence, context.sourceRoot).map(() => valid))
        .andThen((valid) => planResponse(context, valid)),
    start: (task: TaskInput) => parseRequest(TaskSchema, task, "task").asyncAndThen((valid) => start(context, valid)),
    step: (runId: string, body: StepBodyInput) =>
      parseRunId(runId).andThen(() => parseRequest(StepBodySchema, body, "step request")).asyncAndThen((valid) => stepRun(context, runId, valid).andThen((report) => statusOf(context, report.run).map((status) => boundStep({ status, ran: report.ran, recovered: report.recovered, omittedPackets: 0 })))),
    checkpoint: (runId: string, body: CheckpointBodyInput) => parseRunId(runId).andThen(() => parseRequest(CheckpointBodySchema, body, "checkpoint request")).asyncAndThen((valid) => checkpoint(context, runId, valid)),
    status: (runId: string) => parseRunId(runId).asyncAndThen(() => readRun(context, runId)).andThen((doc) => statusOf(context, doc.value)),
    abort: (runId: string, body: AbortBodyInput) =>
      parseRunId(runId)
        .andThen(() => parseRequest(AbortBodySchema, body, "abort request"))
        .asyncAndThen((valid) =>
          readRun(context, runId).andThen((doc) => {
            const decided = decideAbort(doc.value, valid.version, context.clock.now(), valid.note);
            if (decided.isErr()) return errAsync(decided.error);
            return writeRun(context, doc, decided.value).andThen((run) => {
              emitAll(context, run, [{ type: "workflow.checkpoint.recorded", stage: run.stages[run.position]?.id ?? null, status: "abort" }, stateEvent(run)]);
              return statusOf(context, run);
            });
          }),
        ),
  });
}

/** Refuses a request over 200,000 bytes of JSON with `too_large`, then validates it. */
function parseRequest<S extends z.ZodType>(schema: S, input: unknown, what: string): Result<z.output<S>, KeelError> {
  let text: string | undefined;
  try {
    text = JSON.stringify(input);
  } catch {
    return err(new KeelError("invalid_input", `${what} must be plain JSON (no cycles, no BigInt)`, { details: { what } }));
  }
  const bytes = text === undefined ? 0 : utf8Bytes(text);
  if (bytes > EVIDENCE_LIMITS.requestBytes) {
    return err(new KeelError("too_large", `${what} is ${bytes} bytes, over the limit of ${EVIDENCE_LIMITS.requestBytes}: send less evidence`, { details: { what, bytes, limit: EVIDENCE_LIMITS.requestBytes } }));
  }
  return validate(schema, input, what);
}

function parseRunId(runId: unknown): Result<string, KeelError> {
  return validate(RunIdSchema, runId, "run id");
}

function planResponse(context: EngineContext, task: z.output<typeof TaskSchema>): Result<PlanResponse, KeelError> {
  return planTask(context, task).map(({ plan, routing }) => ({
    workflow: plan.workflow,
    profile: plan.profile,
    stages: plan.stages.map((stage) => ({
      id: stage.id,
      kind: stage.kind,
      role: stage.role ?? null,
      skills: stage.skills,
      reads: stage.reads,
      final: stage.final,
      status: stage.skip ? ("skipped" as const) : ("pending" as const),
      ...(stage.skip ? { skipReason: stage.skip } : {}),
      ...(routing[stage.id] ? { routing: routing[stage.id]! } : {}),
    })),
    roles: Object.keys(plan.roles),
    maxCorrections: plan.maxCorrections,
    authorityDocuments: plan.authorityDocuments,
  }));
}

interface TaskDoc {
  identity: TaskIdentity;
  current: string;
  runs: string[];
}

function start(context: EngineContext, task: z.output<typeof TaskSchema>): ResultAsync<RunStatus, KeelError> {
  const planned = planTask(context, task);
  if (planned.isErr()) return errAsync(planned.error);
  const { plan, identity, definitionsDigest } = planned.value;
  const { docs } = context.store;
  return docs.get(taskKey(task.taskId)).andThen((taskDoc) => {
    const known = taskDoc?.value as unknown as TaskDoc | undefined;
    if (known) {
      const fields = [...new Set([...Object.keys(identity), ...Object.keys(known.identity)])] as (keyof TaskIdentity)[];
      const changed = fields.filter((field) => canonicalJson(identity[field] ?? null) !== canonicalJson(known.identity[field] ?? null));
      if (changed.length > 0) {
        return errAsync(
          new KeelError("conflict", `task ${task.taskId} was started with another ${changed.join(", ")}: a task id keeps its objective, workflow, profile, scope, risk, complexity and review flags; use a new task id`, {
            details: { taskId: task.taskId, reason: "task_changed", changed },
            retryable: false,
          }),
        );
      }
    }
    const resume = known ? readRun(context, known.current).map((doc) => doc.value).orElse(() => okAsync(undefined)) : okAsync(undefined);
    return resume.andThen((live) => {
      if (live && !isTerminal(live.status)) return statusOf(context, live);
      return intakeEvidence(task.evidence, context.sourceRoot).andThen((evidence) =>
        reserveSlot(context).andThen(() => {
          const runId = newId();
          const at = context.clock.now();
          const fingerprints = Object.fromEntries(evidence.files.map((file) => [file.path, file.hash]));
          const kept = context.retention === "digests" ? holdEvidence(evidence) : evidence;
          const run: RunDoc = {
            schemaVersion: 1,
            runId,
            taskId: task.taskId,
            version: 1,
            createdAt: at,
            updatedAt: at,
            task: identity,
            plan,
            definitionsDigest,
            routingDigest: context.routingDigest,
            evidence: kept,
            taskDigest: digest({ task: identity, evidence: kept }),
            fingerprints,
            sourceDigest: digest(fingerprints),
            status: "ready",
            position: 0,
            stages: plan.stages.map((stage) => ({ id: stage.id, status: "pending" as const, attempts: 0, models: [], packets: [] })),
            corrections: 0,
            callIndex: 0,
            packets: [],
            invalidatedPackets: 0,
            checkpoints: [],
            outcome: null,
            ...(context.retention === "digests" ? { retention: "digests" as const } : {}),
          };
          const nextTask: TaskDoc = { identity, current: runId, runs: [...(known?.runs ?? []), runId].slice(-32) };
          return docs
            .put(runKey(runId), run as unknown as JsonObject, { create: true })
            .andThen(() => docs.put(taskKey(task.taskId), nextTask as unknown as JsonObject, taskDoc ? { expectedVersion: taskDoc.version } : { create: true }))
            .mapErr((error) => (error.code === "conflict" ? new KeelError("conflict", `task ${task.taskId} was started concurrently by another caller: read its status`, { details: { taskId: task.taskId, reason: "concurrent_start" }, cause: error }) : error))
            .andThen(() => {
              emitAll(context, run, [{ type: "workflow.run.started", stage: plan.stages[0]?.id ?? null, status: run.status }]);
              return statusOf(context, run);
            });
        }),
      );
    });
  });
}

/** Counts a new run against the retained-run cap (one compare-and-swap write). */
function reserveSlot(context: EngineContext): ResultAsync<void, KeelError> {
  const { docs } = context.store;
  const attempt = (left: number): ResultAsync<void, KeelError> =>
    docs.get(indexKey).andThen((doc) => {
      const count = typeof (doc?.value as { runs?: unknown } | undefined)?.runs === "number" ? ((doc!.value as { runs: number }).runs) : 0;
      if (count >= context.maxRetainedRuns) {
        return errAsync(new KeelError("limit_exceeded", `the store retains ${count} workflow runs, the cap is ${context.maxRetainedRuns}: archive or delete old runs (or raise maxRetainedRuns) before starting new ones`, { details: { reason: "retained_run_cap", runs: count, limit: context.maxRetainedRuns } }));
      }
      return docs
        .put(indexKey, { runs: count + 1 }, doc ? { expectedVersion: doc.version } : { create: true })
        .map(() => undefined)
        .orElse((error) => (error.code === "conflict" && left > 0 ? attempt(left - 1) : errAsync(error)));
    });
  return attempt(20);
}

function checkpoint(context: EngineContext, runId: string, body: z.output<typeof CheckpointBodySchema>): ResultAsync<RunStatus, KeelError> {
  return readRun(context, runId).andThen((doc) => {
    const run = doc.value;
    const given = body.evidence;
    const evidence: ResultAsync<{ snapshot: EvidenceSnapshot; fingerprints: Record<string, string> } | undefined, KeelError> = given
      ? intakeEvidence(given, context.sourceRoot, run.evidence).map((snapshot) => {
          // A digests run merges in digest space: what was given is held anew, the rest keeps its digests.
          const kept = run.retention === "digests" ? mergeHeld(run.evidence, given, snapshot) : snapshot;
          return { snapshot: kept, fingerprints: Object.fromEntries(kept.files.map((file) => [file.path, file.hash])) };
        })
      : okAsync(undefined);
    return evidence.andThen((given) => {
      const decided = decideCheckpoint(run, { ...body, evidence: given, at: context.clock.now() });
      if (decided.isErr()) return errAsync(decided.error);
      return writeRun(context, doc, decided.value).andThen((next) => {
        emitAll(context, next, [{ type: "workflow.checkpoint.recorded", stage: run.stages[run.position]?.id ?? null, status: body.action }, stateEvent(next)]);
        return statusOf(context, next);
      });
    });
  });
}

function statusOf(context: EngineContext, run: RunDoc): ResultAsync<RunStatus, KeelError> {
  const lease = context.store.leases.current(leaseName(run.runId)).map((current): LeaseStatus => {
    if (!current) return { state: "free" };
    return { state: "held", holder: current.holder, expiresAt: current.expiresAt };
  });
  const budget = taskScope(context, run).snapshot();
  return ResultAsync.combine([lease, budget] as const).map(([leaseStatus, snapshot]) => buildStatus(run, snapshot, leaseStatus));
}

/** Keeps a step answer within 40,000 bytes: the earliest packets are left out first (their digests stay). */
function boundStep(response: StepResponse): StepResponse {
  const size = (value: StepResponse) => utf8Bytes(canonicalJson(value));
  if (size(response) <= RESPONSE_LIMITS.stepBytes) return response;
  const ran = [...response.ran];
  let omitted = 0;
  for (let index = 0; index < ran.length && size({ ...response, ran, omittedPackets: omitted }) > RESPONSE_LIMITS.stepBytes; index++) {
    const call = ran[index]!;
    if (!call.packet) continue;
    const { packet: _dropped, ...rest } = call;
    ran[index] = rest;
    omitted += 1;
  }
  return { ...response, ran, omittedPackets: omitted };
}

export type { HandoffPacket };
