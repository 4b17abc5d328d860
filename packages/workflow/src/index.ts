/**
 * `@keel/workflow`: staged workflows a supervisor drives. What a host writes against: the
 * catalog of definitions, the engine, the host's stage call and the results it answers, and the
 * pure decisions under them. The zod schemas, constants and the types of stored documents are
 * in `@keel/workflow/schemas`.
 *
 * @packageDocumentation
 */
export { createCatalog, inspectCatalogDirectory, inspectDefinitions, loadCatalog } from "./catalog.js";
export type { Catalog, CatalogInspection, CatalogIssue, CatalogOptions } from "./catalog.js";
export type { DefinitionSet } from "./definition-schemas.js";
export { createWorkflowEngine } from "./workflow-engine.js";
export type { PlanResponse, RanCall, StepResponse, WorkflowEngine, WorkflowEngineOptions } from "./workflow-engine.js";
export type { Retention } from "./evidence-retention.js";
export type { ExecuteStage, StageCall, StageResult } from "./stage-execute.js";
export type { AbortBodyInput, CheckpointAction, CheckpointBodyInput, HandoffPacket, MismatchPolicy, StepBodyInput, TaskInput } from "./engine-requests.js";
export type { RunStatus, StageStatus } from "./run-status.js";
export { checkVersion, decideAbort, decideCheckpoint } from "./run-state.js";
export { decideContinue, decideInterrupted, findInterruptedWork } from "./run-handoff.js";
export type { RunOutcome, RunState, StageState } from "./run-state.js";
export { buildPlan } from "./workflow-plan.js";
export { selectModel } from "./model-select.js";
export type { Model, ModelInput, ModelSelection, RoutingPreference, SelectModelInput } from "./model-select.js";
export { fingerprintFiles, intakeEvidence } from "./evidence.js";
export { classifyEvidenceChange } from "./evidence-change.js";
export type { EvidenceInput } from "./evidence.js";
export { appendJournal, readJournal } from "./run-journal.js";
