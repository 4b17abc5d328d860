/**
 * `@keel/skills`: layered skill discovery for agent runtimes. What a host writes against: the
 * skill library (layers, resolve, search, read, stage) and the view it returns, the prompt
 * contract and delivery per backend, the managing calls (import, library update, visibility,
 * withdrawal) with their options and reports, and project instruction discovery. The zod schemas,
 * constants and defaults, the types of a view's and a report's parts, the file-system seam and
 * the pure decisions under import and update are in `@keel/skills/schemas`.
 *
 * @packageDocumentation
 */
export { createSkillLibrary } from "./skill-library.js";
export type { SkillLayer, SkillLibrary, SkillLibraryOptions, SkillLimits } from "./skill-library.js";
export type { SkillBody } from "./skill-body.js";
export type { SkillDiagnostic, SkillDiscoveryMode, SkillEntry, SkillRoot, SkillView } from "./skill-view.js";
export { searchSkills } from "./skill-search.js";
export type { SkillSearchHit, SkillSearchOptions } from "./skill-search.js";
export { renderSkillContract } from "./skill-contract.js";
export type { RenderSkillContractOptions } from "./skill-contract.js";
export { planSkillDelivery } from "./skill-delivery.js";
export type { SkillDelivery, SkillDeliveryMode } from "./skill-delivery.js";
export { stageSkills } from "./skill-staging.js";
export type { StageReport, StageSkillsOptions } from "./skill-staging.js";
export type { ManagedLayerOptions } from "./skill-manage-options.js";
export type { ManualAdmission, VerificationSummary } from "./skill-admission.js";
export type { SkillMetadata, SkillRouting } from "./skill-metadata.js";
export { importSkill, readSkillMetadata } from "./skill-import.js";
export type { ImportSkillOptions, ImportSkillReport } from "./skill-import.js";
export { installLibrary, updateLibrary } from "./skill-library-update.js";
export type { LibraryUpdateEntry, LibraryUpdateReport, UpdateLibraryOptions } from "./skill-library-update.js";
export { getSkillVisibility, setSkillVisibility } from "./skill-visibility.js";
export type { SetSkillVisibilityOptions, SkillVisibility, SkillVisibilityReport } from "./skill-visibility.js";
export { purgeWithdrawnSkills, withdrawSkill } from "./skill-withdraw.js";
export type { PurgeWithdrawnOptions, WithdrawSkillOptions, WithdrawSkillReport } from "./skill-withdraw.js";
export { discoverInstructions, renderInstructions } from "./skill-instructions.js";
export type { DiscoverInstructionsOptions, InstructionDiscovery, InstructionFile } from "./skill-instructions.js";
