/**
 * `@keel/skills/schemas`: the zod schemas of a view and of a managed skill's metadata and
 * admission, the constants and defaults (limits, delivery modes, the contract's rules, the
 * instruction file names), the types of the parts of a view, a staging report and an instruction
 * discovery, the argument types of the library's methods, the file-system seam of the managing
 * calls (`SkillIo`, `nodeSkillIo`), the verification summary file's reader, and the pure decisions and the content digest that
 * `importSkill` and `updateLibrary` apply. The main entry, `@keel/skills`, holds what a host
 * writes against: the library, the view, delivery, the managing calls and instruction discovery.
 *
 * @packageDocumentation
 */
export { DEFAULT_SKILL_LIMITS } from "./skill-library.js";
export type { FoundSkill, GetSkillOptions, ReadBodyContext, ResolveSkillsOptions } from "./skill-library.js";
export { SKILL_DIAGNOSTIC_CODES, SkillEntrySchema, SkillRootSchema, SkillViewSchema } from "./skill-view.js";
export type { ShadowedSkill, SkillDiagnosticCode, SkillDiagnosticSeverity, SkillLocation, SkillOwnership, SkillScanStats } from "./skill-view.js";
export { DEFAULT_CONTRACT_MAX_BYTES, SKILL_RULES } from "./skill-contract.js";
export { SKILL_DELIVERY_MODES, STAGED_SKILLS_DIRECTORY, SkillDeliveryModeSchema } from "./skill-delivery.js";
export type { StageAction, StagedSkill } from "./skill-staging.js";
export { nodeSkillIo } from "./skill-io.js";
export type { SkillIo } from "./skill-io.js";
export { DEFAULT_MANAGED_SKILL_LIMITS, DEFAULT_VERSION_GRACE_MS } from "./skill-manage-options.js";
export type { ManagedSkillLimits } from "./skill-manage-options.js";
export { decideAdmission, ManualAdmissionSchema, VerificationSummarySchema } from "./skill-admission.js";
export type { AdmissionDecision, AdmissionRefusal, AdmissionVerdict, VerificationBackendResult } from "./skill-admission.js";
export { MAX_VERIFICATION_FILE_BYTES, readVerificationSummary } from "./skill-verification-file.js";
export { SkillMetadataSchema, SkillRoutingSchema, SkillSourceSchema } from "./skill-metadata.js";
export type { SkillSource } from "./skill-metadata.js";
export { digestSkillTree } from "./skill-digest.js";
export type { SkillTreeDigest } from "./skill-digest.js";
export { decideLibraryUpdate } from "./skill-library-decision.js";
export type { LibraryAction, LibraryPlanEntry, LibrarySkillFacts } from "./skill-library-decision.js";
export { DEFAULT_INSTRUCTION_FILE_NAMES } from "./skill-instructions.js";
export type { InstructionScope, SkippedInstructionFile } from "./skill-instructions.js";
