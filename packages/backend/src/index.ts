export type { BackendCapabilities, BackendInstructionDelivery, BackendSkillDelivery, BackendUsageSupport } from "./backend-capabilities.js";
export type { BackendFileAccess, BackendFileOperation, BackendTurnRequest, BackendTurnResult } from "./backend-turn.js";
export type { Backend } from "./backend-port.js";
export type { BackendFileAccessEvent, BackendTextEvent, BackendToolCallEvent, BackendTurnEvent, BackendTurnListener } from "./backend-events.js";
export { safeTurnListener } from "./backend-events.js";
export {
  BackendTurnRequestSchema,
  MAX_RESUME_STATE_BYTES,
  MAX_THREAD_ID_LENGTH,
  MAX_TURN_TIMEOUT_MS,
  validateBackendTurnRequest,
} from "./backend-request.js";
export {
  BACKEND_ERROR_CODES,
  ERROR_STDERR_TAIL_CHARS,
  backendError,
  stderrTail,
  withBackendContext,
} from "./backend-errors.js";
export type { BackendErrorCode, BackendErrorContext } from "./backend-errors.js";
