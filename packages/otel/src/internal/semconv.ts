/**
 * Attribute names. The `gen_ai.*` strings are the OpenTelemetry GenAI semantic conventions as
 * shipped in `@opentelemetry/semantic-conventions` 1.45.0 (its `/incubating` entry): copied, not
 * imported, as that package asks of instrumentation libraries (the constants are deprecated there
 * and move to a repository with no npm package). The `keel.*` names are Keel's own, for what the
 * conventions do not name; the README lists them.
 */
export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  agentName: "gen_ai.agent.name",
  conversationId: "gen_ai.conversation.id",
  requestModel: "gen_ai.request.model",
  usageInputTokens: "gen_ai.usage.input_tokens",
  usageOutputTokens: "gen_ai.usage.output_tokens",
  usageCacheReadInputTokens: "gen_ai.usage.cache_read.input_tokens",
  usageCacheCreationInputTokens: "gen_ai.usage.cache_creation.input_tokens",
  usageReasoningOutputTokens: "gen_ai.usage.reasoning.output_tokens",
  toolName: "gen_ai.tool.name",
  toolType: "gen_ai.tool.type",
  workflowName: "gen_ai.workflow.name",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  tokenType: "gen_ai.token.type",
} as const;

/**
 * Metric names: the two GenAI client metrics of `@opentelemetry/semantic-conventions` 1.45.0
 * (incubating: `METRIC_GEN_AI_CLIENT_TOKEN_USAGE`, `METRIC_GEN_AI_CLIENT_OPERATION_DURATION`,
 * with `gen_ai.token.type` = `input` / `output`), and Keel's own.
 */
export const METRIC = {
  tokenUsage: "gen_ai.client.token.usage",
  operationDuration: "gen_ai.client.operation.duration",
  budgetRemaining: "keel.budget.remaining",
  workSessionToolCalls: "keel.work_session.tool_calls",
  workSessionActiveMinutes: "keel.work_session.active_minutes",
} as const;

/**
 * The conventions' advised bucket boundaries: tokens (powers of 4) and seconds (doubling from
 * 10 ms), the seconds extended to about 11 minutes, since an agent turn lasts far longer than
 * one model call.
 */
export const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
export const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84, 327.68, 655.36];

/** `gen_ai.operation.name` values Keel uses. */
export const OPERATION = {
  invokeAgent: "invoke_agent",
  executeTool: "execute_tool",
  invokeWorkflow: "invoke_workflow",
} as const;

/** The stable `error.type` attribute (stable semantic conventions). */
export const ERROR_TYPE = "error.type";

/** Keel's own attribute names. */
export const KEEL = {
  missionId: "keel.mission.id",
  backend: "keel.backend",
  sessionPolicy: "keel.session.policy",
  sessionAction: "keel.session.action",
  rotationReason: "keel.session.rotation_reason",
  resumeFailed: "keel.session.resume_failed",
  capsulePath: "keel.capsule.path",
  promptBytes: "keel.prompt.bytes",
  turn: "keel.turn.number",
  wallMs: "keel.turn.wall_ms",
  costUsd: "keel.usage.cost_usd",
  taskId: "keel.task.id",
  workSessionId: "keel.work_session.id",
  toolCalls: "keel.tool_calls",
  modelPin: "keel.work_session.model_pin",
  ioPath: "keel.io.path",
  ioBytes: "keel.io.bytes",
  skill: "keel.skill.name",
  errorCode: "keel.error.code",
  errorRetryable: "keel.error.retryable",
  budgetScope: "keel.budget.scope",
  budgetLimitingScope: "keel.budget.limiting_scope",
  budgetReservationId: "keel.budget.reservation_id",
  budgetDimensions: "keel.budget.dimensions",
  budgetOutcome: "keel.budget.outcome",
  budgetDimension: "keel.budget.dimension",
  budgetAsked: "keel.budget.asked",
  budgetRemaining: "keel.budget.remaining",
  budgetLimit: "keel.budget.limit",
  budgetPercent: "keel.budget.percent",
  budgetLevel: "keel.budget.level",
  capacityCode: "keel.capacity.code",
  capacityLimit: "keel.capacity.limit",
  capacityValue: "keel.capacity.value",
  warningTarget: "keel.warning.target",
  warningOperation: "keel.warning.operation",
  warningCode: "keel.warning.code",
  warningMessage: "keel.warning.message",
  workflowRunId: "keel.workflow.run_id",
  workflowVersion: "keel.workflow.version",
  workflowStage: "keel.workflow.stage",
  workflowStatus: "keel.workflow.status",
  workflowSkipped: "keel.workflow.stage.skipped",
  workSessionTurns: "keel.work_session.turns",
  workSessionTasks: "keel.work_session.tasks",
  workSessionTokens: "keel.work_session.tokens",
  workSessionActiveMinutes: "keel.work_session.active_minutes",
  skillsOwn: "keel.skills.own",
  skillsReference: "keel.skills.reference",
  skillsDelivery: "keel.skills.delivery_mode",
} as const;

/**
 * A Keel event time (epoch ms) as an OpenTelemetry time. A `Date`, not the number: the SDK reads
 * a number smaller than its process's time origin as `performance.now()` time.
 */
export const epoch = (at: number): Date => new Date(at);
