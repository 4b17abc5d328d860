import { isSafeName } from "@keel/core";
import { LimitsSchema } from "@keel/budget/schemas";
import { z } from "zod";

/** The definition format version this package reads. */
export const DEFINITION_SCHEMA_VERSION = 1;

/** Compute tiers, weakest first. A tier is a ceiling on the models a stage may use, never a floor. */
export const TIERS = ["light", "medium", "large", "maximum"] as const;

/** A compute tier: `light` < `medium` < `large` < `maximum`. */
export type Tier = (typeof TIERS)[number];

/** The zod schema of a {@link Tier}. */
export const TierSchema = z.literal(TIERS);

/** Evidence a skill cannot run without: an empty diff or test output is refused before the call. */
export const EVIDENCE_NEEDS = ["diff", "testOutput"] as const;

/** Task risk levels, lowest first. */
export const RISKS = ["low", "medium", "high"] as const;

/** Task complexity levels, smallest first. */
export const COMPLEXITIES = ["small", "medium", "large"] as const;

/** A safe name as a plain string: 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit. */
export const IdSchema = z.string().refine((value): boolean => isSafeName(value), "not a safe name: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit");
const Id = IdSchema;
const Version = z.string().regex(/^\d+\.\d+\.\d+$/, "version must look like 1.0.0");
const Text = (max: number) => z.string().max(max, `at most ${max} characters`);
const Capability = z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, "a capability is a lowercase word (a-z, 0-9, _ or -)");
const Header = {
  schemaVersion: z.literal(DEFINITION_SCHEMA_VERSION, { error: `schemaVersion must be ${DEFINITION_SCHEMA_VERSION}` }),
  id: Id,
  version: Version,
  description: Text(1000),
};

/**
 * A skill: one unit of work a role can do in a stage (explore, review a diff, analyse tests…).
 * `needs` names evidence it refuses to run without; `outputBytes` is its output allowance,
 * counted against a model's context window before the call.
 */
export const SkillDefinitionSchema = z.strictObject({
  ...Header,
  instructions: Text(8000),
  needs: z.array(z.literal(EVIDENCE_NEEDS)).max(2).default([]),
  capabilities: z.array(Capability).max(16).default([]),
  outputBytes: z.number().int().min(256).max(65_536).default(12_000),
});

/** A skill definition as written (defaults not applied). */
export type SkillDefinitionInput = z.input<typeof SkillDefinitionSchema>;
/** A validated skill definition. */
export type SkillDefinition = z.output<typeof SkillDefinitionSchema>;

/**
 * A role: who does a stage's work, with the skills it supports and the least it needs from a
 * model. `tier` is the role's ceiling; `models` (optional) the models enabled for the role.
 */
export const RoleDefinitionSchema = z.strictObject({
  ...Header,
  skills: z.array(Id).min(1).max(32),
  enabled: z.boolean().default(true),
  minimumStrength: z.number().int().min(0).max(100).default(0),
  minimumContext: z.number().int().min(0).max(10_000_000).default(0),
  capabilities: z.array(Capability).max(16).default([]),
  tier: TierSchema.default("maximum"),
  models: z.array(z.string().min(1).max(128)).max(64).optional(),
  timeoutMs: z.number().int().min(1000).max(86_400_000).default(600_000),
  attempts: z.number().int().min(1).max(8).default(2),
  escalation: z.boolean().default(true),
});

/** A role definition as written. */
export type RoleDefinitionInput = z.input<typeof RoleDefinitionSchema>;
/** A validated role definition. */
export type RoleDefinition = z.output<typeof RoleDefinitionSchema>;

/** Task flags that request a stage explicitly (see {@link StageConditionSchema}'s `requested`). */
export const STAGE_REQUESTS = ["security_review", "resource_review"] as const;

/** A task flag that requests a stage. */
export type StageRequest = (typeof STAGE_REQUESTS)[number];

/**
 * When a local stage runs: every listed field must match the task (absent fields match all).
 * `requested` names a task flag (`security_review`, `resource_review`) that runs the stage
 * whatever its risk and complexity conditions say.
 */
export const StageConditionSchema = z.strictObject({
  risk: z.array(z.literal(RISKS)).min(1).max(3).optional(),
  complexity: z.array(z.literal(COMPLEXITIES)).min(1).max(3).optional(),
  requested: z.literal(STAGE_REQUESTS).optional(),
});

/** A stage run by a role on a model: its skills in order, and the earlier stages it reads. */
export const LocalStageSchema = z.strictObject({
  id: Id,
  kind: z.literal("local"),
  role: Id,
  skills: z.array(Id).min(1).max(8),
  reads: z.array(Id).max(16).default([]),
  when: StageConditionSchema.optional(),
  originalEvidence: z.boolean().default(false),
});

/** A supervisor checkpoint: only `checkpoint(...)` advances past it. Never conditional. */
export const CheckpointStageSchema = z.strictObject({
  id: Id,
  kind: z.literal("checkpoint"),
  final: z.boolean().default(false),
  prompt: Text(2000).default(""),
});

/** One stage of a workflow. */
export const StageSchema = z.discriminatedUnion("kind", [LocalStageSchema, CheckpointStageSchema]);

/** A local stage as written. */
export type LocalStageInput = z.input<typeof LocalStageSchema>;
/** A validated local stage. */
export type LocalStage = z.output<typeof LocalStageSchema>;
/** A validated checkpoint stage. */
export type CheckpointStage = z.output<typeof CheckpointStageSchema>;
/** A validated stage. */
export type Stage = z.output<typeof StageSchema>;

/**
 * A workflow: stages in order, ending in a final checkpoint. `kind` decides where a `revise`
 * resumes: `issue` workflows right after `reviseFrom` (their implementation checkpoint's next
 * stage), `review` workflows from `reviseFrom` (exploration). `maxCorrections` is the shared
 * number of correction cycles.
 */
export const WorkflowDefinitionSchema = z.strictObject({
  ...Header,
  kind: z.literal(["issue", "review"]),
  stages: z.array(StageSchema).min(1).max(64),
  reviseFrom: Id,
  maxCorrections: z.number().int().min(0).max(10).default(2),
  budget: LimitsSchema.optional(),
});

/** A workflow definition as written. */
export type WorkflowDefinitionInput = z.input<typeof WorkflowDefinitionSchema>;
/** A validated workflow definition. */
export type WorkflowDefinition = z.output<typeof WorkflowDefinitionSchema>;

/**
 * A role override of a profile. It can only tighten: a higher minimum strength or context, more
 * capabilities, a shorter timeout, fewer attempts, a lower tier, escalation switched off.
 */
export const RoleOverrideSchema = z.strictObject({
  minimumStrength: z.number().int().min(0).max(100).optional(),
  minimumContext: z.number().int().min(0).max(10_000_000).optional(),
  capabilities: z.array(Capability).max(16).optional(),
  timeoutMs: z.number().int().min(1000).max(86_400_000).optional(),
  attempts: z.number().int().min(1).max(8).optional(),
  tier: TierSchema.optional(),
  escalation: z.boolean().optional(),
});

/** A validated role override. */
export type RoleOverride = z.output<typeof RoleOverrideSchema>;

/** A stage override: disable a local stage, or replace it by another local stage of the same id. */
export const StageOverrideSchema = z.union([
  z.strictObject({ disable: z.literal(true) }),
  z.strictObject({ replace: LocalStageSchema }),
]);

/** A validated stage override. */
export type StageOverride = z.output<typeof StageOverrideSchema>;

/** A relative path inside the project: no absolute path, no `..`, no backslash. */
export const ProjectPathSchema = z
  .string()
  .min(1)
  .max(512)
  .refine((path) => !path.startsWith("/") && !/^[A-Za-z]:/.test(path), "must be relative to the project root")
  .refine((path) => !path.includes("\\"), "must use forward slashes")
  .refine((path) => path.split("/").every((part) => part !== ".." && part !== "." && part !== ""), "must not contain '..', '.' or empty segments");

/**
 * A project profile: which roles run, bounded extra instructions, authority documents (paths,
 * validated, never loaded by Keel), role overrides that only tighten, stage overrides per
 * workflow, an explicit model allowlist, a tier ceiling and budget limits.
 */
export const ProfileDefinitionSchema = z.strictObject({
  ...Header,
  enableRoles: z.array(Id).max(64).default([]),
  disableRoles: z.array(Id).max(64).default([]),
  instructions: Text(4000).default(""),
  authorityDocuments: z.array(ProjectPathSchema).max(16).default([]),
  roleOverrides: z.record(Id, RoleOverrideSchema).default({}),
  stageOverrides: z.record(Id, z.record(Id, StageOverrideSchema)).default({}),
  allowedModels: z.array(z.string().min(1).max(128)).max(64).optional(),
  tier: TierSchema.optional(),
  budget: LimitsSchema.optional(),
});

/** A profile definition as written. */
export type ProfileDefinitionInput = z.input<typeof ProfileDefinitionSchema>;
/** A validated profile definition. */
export type ProfileDefinition = z.output<typeof ProfileDefinitionSchema>;

/** The four definition kinds, as catalog directory names. */
export const DEFINITION_KINDS = ["skills", "roles", "workflows", "profiles"] as const;

/** A definition kind. */
export type DefinitionKind = (typeof DEFINITION_KINDS)[number];

/** The schema of each kind. */
export const DEFINITION_SCHEMAS = {
  skills: SkillDefinitionSchema,
  roles: RoleDefinitionSchema,
  workflows: WorkflowDefinitionSchema,
  profiles: ProfileDefinitionSchema,
} as const;

/** Definitions as plain objects, by kind (what a catalog is loaded from). */
export interface DefinitionSet {
  skills?: SkillDefinitionInput[];
  roles?: RoleDefinitionInput[];
  workflows?: WorkflowDefinitionInput[];
  profiles?: ProfileDefinitionInput[];
}

/** The index of a tier (0 for `light`). */
export function tierRank(tier: Tier): number {
  return TIERS.indexOf(tier);
}
