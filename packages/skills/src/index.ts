export { createSkillLibrary, DEFAULT_SKILL_LIMITS } from "./skill-library.js";
export type { ReadBodyContext, ResolveSkillsOptions, SkillLayer, SkillLibrary, SkillLibraryOptions, SkillLimits } from "./skill-library.js";
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
