/**
 * `@keel/workflow/schemas`: the zod schemas an MCP server or a CLI validates its JSON with, the
 * constants and limits the engine enforces, and the types of the documents a run keeps (its
 * definitions, plan, state and journal records). The main entry, `@keel/workflow`, holds what a
 * host writes against: the catalog, the engine and its results.
 *
 * @packageDocumentation
 */
export {
  COMPLEXITIES,
  DEFINITION_KINDS,
  DEFINITION_SCHEMAS,
  DEFINITION_SCHEMA_VERSION,
  EVIDENCE_NEEDS,
  IdSchema,
  CheckpointStageSchema,
  LocalStageSchema,
  ProfileDefinitionSchema,
  ProjectPathSchema,
  RISKS,
  RoleDefinitionSchema,
  RoleOverrideSchema,
  SkillDefinitionSchema,
  StageConditionSchema,
  StageOverrideSchema,
  StageSchema,
  STAGE_REQUESTS,
  TIERS,
  TierSchema,
  WorkflowDefinitionSchema,
} from "./definition-schemas.js";
export type {
  CheckpointStage,
  DefinitionKind,
  LocalStage,
  LocalStageInput,
  ProfileDefinition,
  ProfileDefinitionInput,
  RoleDefinition,
  RoleDefinitionInput,
  RoleOverride,
  SkillDefinition,
  SkillDefinitionInput,
  Stage,
  StageOverride,
  StageRequest,
  Tier,
  WorkflowDefinition,
  WorkflowDefinitionInput,
} from "./definition-schemas.js";
export { BUILTIN_DEFINITIONS } from "./catalog-builtins.js";
export { DEFAULT_CATALOG_LIMITS } from "./catalog.js";
export type { CatalogLimits } from "./catalog.js";
export type { EffectiveRole, PlanSubject, PlannedStage, SkipReason, WorkflowPlan } from "./workflow-plan.js";
export { ModelRegistrySchema, ModelSchema } from "./model-select.js";
export type { RoutingRole, SelectionGate } from "./model-select.js";
export { EVIDENCE_LIMITS, EvidenceSchema, FileSelectionSchema, ValidationStatusSchema } from "./evidence.js";
export type { Evidence, EvidenceSnapshot, FileExcerpt, FileSelection, ValidationStatus } from "./evidence.js";
export type { EvidenceChange } from "./evidence-change.js";
export { RESPONSE_LIMITS } from "./response-bounds.js";
export { RETENTIONS } from "./evidence-retention.js";
export {
  AbortBodySchema,
  AbortRequestSchema,
  CHECKPOINT_ACTIONS,
  CheckpointBodySchema,
  CheckpointRequestSchema,
  HandoffPacketSchema,
  MismatchPolicySchema,
  PlanRequestSchema,
  RunIdSchema,
  RunVersionSchema,
  StatusRequestSchema,
  StepBodySchema,
  StepRequestSchema,
  TaskIdSchema,
  TaskSchema,
} from "./engine-requests.js";
export type { Task } from "./engine-requests.js";
export { TERMINAL_STATES } from "./run-state.js";
export type { InterruptedDecisionInput, InterruptedWork, OpenReservationInput } from "./run-handoff.js";
export type { CheckpointDecisionInput, CheckpointRecord, PacketRecord, RunDoc, StageRecord, TaskIdentity } from "./run-state.js";
export type { BudgetStatus, LeaseStatus } from "./run-status.js";
export type { AppendJournalOptions, JournalCall, JournalEntry, JournalRecord, JournalResult } from "./run-journal.js";
export type { PlannedRouting } from "./workflow-engine.js";
