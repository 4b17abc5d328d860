/**
 * `@keel/sessions/schemas`: the zod schemas of the documents role and work sessions keep
 * (capsule, mission checkpoint, handoff, work sessions), their store keys, the constants and
 * limits, the environment variable names of `policyFromEnv`, and the types of the documents'
 * parts. A tool that reads a store offline (`keel inspect`) or an MCP server validates its JSON
 * with these. The main entry, `@keel/sessions`, holds what a host writes against: role sessions,
 * work sessions and their results.
 *
 * @packageDocumentation
 */
export { DEFAULT_SESSION_LIMITS, SESSION_POLICIES, SessionLimitsSchema, SessionPolicySchema } from "./session-policy.js";
export type { EffectivePolicy } from "./session-policy.js";
export { MAX_INPUT_TOKENS_ENV, MAX_TURNS_ENV, POLICY_ENV } from "./session-env.js";
export type { Environment } from "./session-env.js";
export { ROTATION_REASONS, SESSION_REASONS } from "./session-decision.js";
export type { RotationReason, SessionActionKind, SessionReason, TurnConditions } from "./session-decision.js";
export type { WarningTarget } from "./turn-types.js";
export { CAPSULE_LIMITS, CAPSULE_SCHEMA_VERSION, CapsuleSchema, ObjectiveRevisionSchema } from "./capsule-schema.js";
export type { CapsuleCounters, CapsuleFailure, CheckpointPointer, ObjectiveRevision, ThreadBinding } from "./capsule-schema.js";
export { capsuleKey, checkpointKey, handoffKey, roleLeaseName } from "./session-keys.js";
export { DEFAULT_ROLE_LEASE, RoleLeaseOptionsSchema } from "./role-lease.js";
export { MISSION_CHECKPOINT_SCHEMA_VERSION, MissionCheckpointSchema } from "./mission-checkpoint.js";
export type { RoleCheckpointEntry } from "./mission-checkpoint.js";
export { HANDOFF_LIMITS, HANDOFF_SCHEMA_VERSION, HandoffRecordSchema, HandoffSchema } from "./handoff.js";
export type { InFlightTask } from "./handoff.js";
export {
  ClosedWorkSessionRecordSchema,
  WORK_SESSION_HISTORY,
  WORK_SESSION_MAX_TASK_IDS,
  WORK_SESSION_SCHEMA_VERSION,
  WorkSessionRecordSchema,
  WorkSessionsDocSchema,
  workSessionKey,
} from "./work-session-record.js";
export type { ClosedWorkSessionRecord, WorkSessionRecord, WorkSessionsDoc } from "./work-session-record.js";
export { DEFAULT_WORK_SESSION_LIMITS, auditOf, viewOf } from "./work-session-status.js";
export type { WorkSessionAudit, WorkSessionLimitName } from "./work-session-status.js";
