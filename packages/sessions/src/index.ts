export { DEFAULT_SESSION_LIMITS, SESSION_POLICIES, SessionLimitsSchema, SessionPolicySchema, resolvePolicy } from "./session-policy.js";
export type { EffectivePolicy, SessionLimits, SessionPolicy } from "./session-policy.js";
export { MAX_INPUT_TOKENS_ENV, MAX_TURNS_ENV, POLICY_ENV, policyFromEnv } from "./session-env.js";
export type { Environment, SessionSettings } from "./session-env.js";
export { ROTATION_REASONS, SESSION_REASONS, decideSessionAction } from "./session-decision.js";
export type {
  RotationReason,
  SessionActionKind,
  SessionDecision,
  SessionDecisionInput,
  SessionReason,
  TurnConditions,
} from "./session-decision.js";
export { CAPSULE_LIMITS, CAPSULE_SCHEMA_VERSION, CapsuleSchema, ObjectiveRevisionSchema } from "./capsule-schema.js";
export type { Capsule, CapsuleCounters, CapsuleFailure, CheckpointPointer, ObjectiveRevision, ThreadBinding } from "./capsule-schema.js";
export { TRUNCATION_MARKER, boundCapsule, truncateList, truncateText } from "./capsule-bounds.js";
export type { BoundedCapsule, TruncatableField } from "./capsule-bounds.js";
export { applyTurnToCapsule, emptyCapsule } from "./capsule-update.js";
export type { TurnRecord } from "./capsule-update.js";
export { capsuleKey, checkpointKey, handoffKey, hygieneKey, keyText, roleLeaseName } from "./session-keys.js";
export type {
  Execute,
  RoleTurnRequest,
  SessionWarning,
  TurnOutcome,
  TurnPlan,
  TurnRequest,
  TurnResult,
  WarningTarget,
} from "./turn-types.js";
export { MISSION_CHECKPOINT_SCHEMA_VERSION, MissionCheckpointSchema } from "./mission-checkpoint.js";
export type { InitializedCheckpoint, MissionCheckpoint, MissionCheckpointRecord, RoleCheckpointEntry } from "./mission-checkpoint.js";
export { HANDOFF_LIMITS, HANDOFF_SCHEMA_VERSION, HandoffRecordSchema, HandoffSchema } from "./handoff.js";
export type { Handoff, HandoffRecord, InFlightTask } from "./handoff.js";
export { createRoleSessions } from "./role-sessions.js";
export type { RoleSessionHandle, RoleSessions, RoleSessionsOptions } from "./role-sessions.js";
export { DEFAULT_HYGIENE_LIMITS, createHygiene } from "./hygiene.js";
export type { CheckpointResult, ClosedWorkSession, Hygiene, HygieneLimitName, HygieneLimits, HygieneOptions, HygieneState, HygieneStatus } from "./hygiene.js";
export {
  ClosedWorkSessionRecordSchema,
  WORK_SESSION_HISTORY,
  WORK_SESSION_MAX_TASK_IDS,
  WORK_SESSION_SCHEMA_VERSION,
  WorkSessionRecordSchema,
  WorkSessionsDocSchema,
  usageTokens,
  workSessionKey,
} from "./work-session-record.js";
export type { ClosedWorkSessionRecord, WorkSessionRecord, WorkSessionTurn, WorkSessionsDoc } from "./work-session-record.js";
export { DEFAULT_WORK_SESSION_LIMITS, auditOf, statusOf as workSessionStatusOf, viewOf } from "./work-session-status.js";
export type { WorkSessionAudit, WorkSessionLimitName, WorkSessionLimits, WorkSessionStatus, WorkSessionView } from "./work-session-status.js";
export { metricsOf, workSessionMetrics } from "./work-session-metrics.js";
export type { WorkSessionMetrics, WorkSessionSlice, WorkSessionWindow } from "./work-session-metrics.js";
export { createWorkSessions } from "./work-session.js";
export type {
  ClosedWorkSessionResult,
  OpenWorkSessionInput,
  RecordTurnInput,
  RecordedTurn,
  WorkSessionCheckpoint,
  WorkSessionScope,
  WorkSessions,
  WorkSessionsOptions,
} from "./work-session.js";
