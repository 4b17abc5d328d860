export type { Backend, BackendCapabilities, BackendSkillDelivery, BackendUsageSupport, TurnRequest, TurnResult } from "./backend-port.js";
export { MAX_THREAD_ID_LENGTH, MAX_TURN_TIMEOUT_MS, TurnRequestSchema, validateTurnRequest, withPlainEnv } from "./backend-port.js";
export { ERROR_STDERR_TAIL_CHARS, backendError, stderrTail, withBackendContext } from "./backend-errors.js";
export type { BackendErrorContext } from "./backend-errors.js";
export { DEFAULT_KILL_GRACE_MS, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_STDERR_BYTES, runProcess } from "./process-runner.js";
export type { ProcessExit, RunProcessOptions } from "./process-runner.js";
export { decideTurnOutcome, emptyFindings } from "./turn-outcome.js";
export type { ParsedTurn, StreamFindings, TurnExit, TurnOutcomeRules } from "./turn-outcome.js";
export { MAX_STRAY_TEXT_CHARS, createJsonLineParser } from "./stream-parser.js";
export type { JsonEvent, StreamParser } from "./stream-parser.js";
export { CliBackendOptionsSchema, DEFAULT_MAX_PROMPT_BYTES, createCliBackend, invocation, promptArgument } from "./cli-backend.js";
export type { CliAdapter, CliBackendOptions, CliInvocation, CliInvocationContext } from "./cli-backend.js";
export { CLI_BACKENDS, detectBackends, findCommand } from "./backend-detect.js";
export type { BackendDetection, CliBackendId, DetectBackendsOptions } from "./backend-detect.js";
export { ScriptedReplySchema, createScriptedBackend, modelScriptedUsage } from "./scripted/index.js";
export type {
  ScriptedBackend,
  ScriptedBackendOptions,
  ScriptedCall,
  ScriptedExchange,
  ScriptedFailure,
  ScriptedReply,
  ScriptedResponder,
  ScriptedStep,
  ScriptedThread,
  ScriptedTurn,
  ScriptedUsageModel,
} from "./scripted/index.js";
