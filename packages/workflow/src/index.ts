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
  TIERS,
  TierSchema,
  WorkflowDefinitionSchema,
  tierRank,
} from "./definition-schemas.js";
export type {
  CheckpointStage,
  DefinitionKind,
  DefinitionSet,
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
  Tier,
  WorkflowDefinition,
  WorkflowDefinitionInput,
} from "./definition-schemas.js";
export { BUILTIN_DEFINITIONS } from "./catalog-builtins.js";
export { DEFAULT_CATALOG_LIMITS, createCatalog, inspectCatalogDirectory, inspectDefinitions, loadCatalog } from "./catalog.js";
export type { Catalog, CatalogInspection, CatalogIssue, CatalogLimits, CatalogOptions } from "./catalog.js";
export { buildPlan, effectiveRole } from "./workflow-plan.js";
export type { EffectiveRole, PlanSubject, PlannedStage, SkipReason, WorkflowPlan } from "./workflow-plan.js";
export { ModelRegistrySchema, ModelSchema, selectModel, tokensOfBytes } from "./model-select.js";
export type { Model, ModelInput, ModelSelection, RoutingPreference, RoutingRole, SelectModelInput, SelectionGate } from "./model-select.js";
export { EVIDENCE_LIMITS, EvidenceSchema, FileSelectionSchema, ValidationStatusSchema, emptyEvidence, fingerprintFiles, intakeEvidence } from "./evidence.js";
export type { Evidence, EvidenceInput, EvidenceSnapshot, FileExcerpt, FileSelection, ValidationStatus } from "./evidence.js";
export { RESPONSE_LIMITS, cutMarker, cutText } from "./response-bounds.js";
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
export type {
  AbortBodyInput,
  CheckpointAction,
  CheckpointBodyInput,
  HandoffPacket,
  MismatchPolicy,
  SignedPacket,
  StepBodyInput,
  Task,
  TaskInput,
} from "./engine-requests.js";
export { TERMINAL_STATES, checkVersion, decideAbort, decideCheckpoint, invalidateFrom, isTerminal, reviseIndex, runInvariants, withEvidence } from "./run-state.js";
export type { CheckpointDecisionInput, CheckpointRecord, PacketRecord, RunDoc, RunOutcome, RunState, StageRecord, StageState, TaskIdentity } from "./run-state.js";
export { buildStatus, boundStatus } from "./run-status.js";
export type { BudgetStatus, LeaseStatus, RunStatus, StageStatus } from "./run-status.js";
export { appendJournal, callHash, decideReplay, describeDiff, isCommitOnly, journalKey, readJournal } from "./run-journal.js";
export type { AppendJournalOptions, JournalCall, JournalEntry, JournalRecord, JournalResult, ReplayDecision } from "./run-journal.js";
export type { ExecuteStage, StageCall, StageResult } from "./stage-execute.js";
export { createWorkflowEngine } from "./workflow-engine.js";
export type { PlanResponse, PlannedRouting, RanCall, StepResponse, WorkflowEngine, WorkflowEngineOptions } from "./workflow-engine.js";
