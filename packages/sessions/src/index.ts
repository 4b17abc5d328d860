/**
 * `@keel/sessions`: role sessions and work sessions. What a host writes against: role sessions
 * (`createRoleSessions`), the turn it asks for, the plan it gets and the outcome it reports, the
 * policy and the pure session decision, the documents it reads back (capsule, mission checkpoint,
 * handoff), and work sessions (`createWorkSessions`) with their status and metrics. The zod
 * schemas, constants, store keys and the types of the stored documents' parts are in
 * `@keel/sessions/schemas`.
 *
 * @packageDocumentation
 */
export { createRoleSessions } from "./role-sessions.js";
export type { RoleSessionHandle, RoleSessions, RoleSessionsOptions } from "./role-sessions.js";
export type { RoleLeaseOptions } from "./role-lease.js";
export type {
  Execute,
  RoleSessionTurnOptions,
  RoleSessionTurnRequest,
  RoleSessionTurnResult,
  SessionWarning,
  TurnOutcome,
  TurnPlan,
  TurnRequest,
  TurnResult,
} from "./turn-types.js";
export type { SessionLimits, SessionPolicy } from "./session-policy.js";
export { policyFromEnv } from "./session-env.js";
export type { SessionSettings } from "./session-env.js";
export { decideSessionAction } from "./session-decision.js";
export type { SessionDecision, SessionDecisionInput } from "./session-decision.js";
export type { Capsule } from "./capsule-schema.js";
export type { InitializedCheckpoint, MissionCheckpoint, MissionCheckpointRecord } from "./mission-checkpoint.js";
export type { Handoff, HandoffRecord } from "./handoff.js";
export { createWorkSessions } from "./work-session.js";
export { decideModelPin } from "./work-session-model.js";
export type { ModelPinCheck } from "./work-session-model.js";
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
export type { WorkSessionLimits, WorkSessionStatus, WorkSessionView } from "./work-session-status.js";
export type { WorkSessionMetrics, WorkSessionSlice, WorkSessionWindow } from "./work-session-metrics.js";
export { createHygiene } from "./hygiene.js";
export type { Hygiene, HygieneLimits, HygieneOptions, HygieneStatus } from "./hygiene.js";
