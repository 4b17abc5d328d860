export { createSkillLibrary, DEFAULT_SKILL_LIMITS } from "./skill-library.js";
export type { FoundSkill, GetSkillOptions, ReadBodyContext, ResolveSkillsOptions, SkillLayer, SkillLibrary, SkillLibraryOptions, SkillLimits } from "./skill-library.js";
export type { SkillBody } from "./skill-body.js";
export { SKILL_DIAGNOSTIC_CODES, SkillEntrySchema, SkillRootSchema, SkillViewSchema } from "./skill-view.js";
export type {
  ShadowedSkill,
  SkillDiagnostic,
  SkillDiagnosticCode,
  SkillDiagnosticSeverity,
  SkillDiscoveryMode,
  SkillEntry,
  SkillLocation,
  SkillOwnership,
  SkillRoot,
  SkillScanStats,
  SkillView,
} from "./skill-view.js";
export { searchSkills, searchTerms } from "./skill-search.js";
export type { SkillSearchHit, SkillSearchOptions } from "./skill-search.js";
export { DEFAULT_CONTRACT_MAX_BYTES, renderSkillContract, SKILL_RULES } from "./skill-contract.js";
export type { RenderSkillContractOptions } from "./skill-contract.js";
export { SKILL_DELIVERY_MODES, STAGED_SKILLS_DIRECTORY, SkillDeliveryModeSchema, planSkillDelivery } from "./skill-delivery.js";
export type { SkillDelivery, SkillDeliveryMode } from "./skill-delivery.js";
export { stageSkills } from "./skill-staging.js";
export type { StageAction, StagedSkill, StageReport, StageSkillsOptions } from "./skill-staging.js";
export { nodeSkillIo } from "./skill-io.js";
export type { SkillIo } from "./skill-io.js";
export { DEFAULT_MANAGED_SKILL_LIMITS } from "./skill-manage-options.js";
export type { ManagedLayerOptions, ManagedSkillLimits } from "./skill-manage-options.js";
export { decideAdmission, ManualAdmissionSchema, VerificationSummarySchema } from "./skill-admission.js";
export type {
  AdmissionDecision,
  AdmissionRefusal,
  AdmissionVerdict,
  ManualAdmission,
  VerificationBackendResult,
  VerificationSummary,
} from "./skill-admission.js";
export { SkillMetadataSchema, SkillRoutingSchema, SkillSourceSchema } from "./skill-metadata.js";
export type { SkillMetadata, SkillRouting, SkillSource } from "./skill-metadata.js";
export { digestSkillTree } from "./skill-digest.js";
export type { SkillTreeDigest } from "./skill-digest.js";
export { importSkill, readSkillMetadata } from "./skill-import.js";
export type { ImportSkillOptions, ImportSkillReport } from "./skill-import.js";
export { setSkillVisibility } from "./skill-visibility.js";
export type { SetSkillVisibilityOptions, SkillVisibility, SkillVisibilityReport } from "./skill-visibility.js";
export { purgeWithdrawnSkills, withdrawSkill } from "./skill-withdraw.js";
export type { PurgeWithdrawnOptions, WithdrawSkillOptions, WithdrawSkillReport } from "./skill-withdraw.js";
export { decideLibraryUpdate } from "./skill-library-decision.js";
export type { LibraryAction, LibraryPlanEntry, LibrarySkillFacts } from "./skill-library-decision.js";
export { installLibrary, updateLibrary } from "./skill-library-update.js";
export type { LibraryUpdateEntry, LibraryUpdateReport, UpdateLibraryOptions } from "./skill-library-update.js";
export { DEFAULT_INSTRUCTION_FILE_NAMES, discoverInstructions, renderInstructions } from "./skill-instructions.js";
export type { DiscoverInstructionsOptions, InstructionDiscovery, InstructionFile, InstructionScope, SkippedInstructionFile } from "./skill-instructions.js";
