export { KEEL_ERROR_CODES, KeelError, keelError, toKeelError } from "./errors.js";
export type { KeelErrorCode, KeelErrorOptions } from "./errors.js";
export { canonicalJson, digest, findNonJson, isJsonValue, utf8Bytes } from "./json.js";
export type { JsonObject, JsonValue } from "./json.js";
export { newId } from "./ids.js";
export { createManualClock, systemClock } from "./clock.js";
export type { Clock, ManualClock } from "./clock.js";
export { SAFE_NAME_PATTERN, SafeNameSchema, isSafeName, parseSafeName } from "./safe-name.js";
export type { SafeName } from "./safe-name.js";
export { estimateTokens } from "./tokens.js";
export { TRUNCATION_MARKER, truncateUtf8 } from "./truncate.js";
export type { TokenEstimator } from "./tokens.js";
export { isCount, isPlainObjectOf, validate, validateFast, validateOrThrow } from "./validate.js";
export { UsageSchema, addUsage, emptyUsage, totalInputTokens } from "./usage.js";
export type { Usage } from "./usage.js";
export { unwrapOrThrow } from "./result.js";
export { createEventBus } from "./events.js";
export type {
  AgentIoEvent,
  BackendTurnFailedEvent,
  BudgetAmounts,
  BudgetEvent,
  EventBase,
  EventBus,
  EventBusOptions,
  EventInput,
  KeelEvent,
  KeelEventMap,
  KeelEventType,
  RoleSessionTurnEvent,
  RoleSessionWarningEvent,
  RoundReviewCompletedEvent,
  SessionAction,
  SkillLibraryAvailableEvent,
  SkillRootInfo,
  TranscriptEvent,
  Unsubscribe,
  WorkflowEvent,
  WorkSessionAuditDueEvent,
  WorkSessionAuditedEvent,
  WorkSessionCheckpointCounterResetEvent,
  WorkSessionCheckpointEvent,
  WorkSessionClosedEvent,
  WorkSessionModelMismatchEvent,
  WorkSessionOpenedEvent,
  WorkSessionRefusedEvent,
  WorkSessionTurnEvent,
} from "./events.js";
