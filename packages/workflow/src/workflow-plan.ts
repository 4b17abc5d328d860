import { KeelError, validate } from "@keel/core";
import type { Limits } from "@keel/budget";
import { err, ok, type Result } from "neverthrow";
import type { Catalog } from "./catalog.js";
import { COMPLEXITIES, IdSchema, RISKS, STAGE_REQUESTS, tierRank, type ProfileDefinition, type RoleDefinition, type Stage, type StageRequest, type Tier } from "./definition-schemas.js";
import { z } from "zod";
import { applyStageOverrides } from "./internal/catalog-validate.js";

/** A role after a profile's overrides: the limits routing and attempts use. */
export interface EffectiveRole {
  id: string;
  skills: string[];
  minimumStrength: number;
  minimumContext: number;
  capabilities: string[];
  tier: Tier;
  models?: string[] | undefined;
  timeoutMs: number;
  attempts: number;
  escalation: boolean;
}

/** Why a planned stage does not run. */
export type SkipReason = "condition" | "profile_disabled" | "role_disabled";

/** One stage of a plan. */
export interface PlannedStage {
  id: string;
  kind: "local" | "checkpoint";
  /** The role of a local stage. */
  role?: string;
  skills: string[];
  reads: string[];
  originalEvidence: boolean;
  final: boolean;
  prompt: string;
  /** Set when the stage is skipped: it costs nothing and has status `skipped`. */
  skip?: SkipReason;
}

/** A workflow resolved for one task: the stages, the effective roles and the budget limits. */
export interface WorkflowPlan {
  workflow: string;
  workflowVersion: string;
  kind: "issue" | "review";
  profile: string | null;
  stages: PlannedStage[];
  roles: Record<string, EffectiveRole>;
  reviseFrom: string;
  maxCorrections: number;
  instructions: string;
  authorityDocuments: string[];
  allowedModels?: string[] | undefined;
  tierCap?: Tier | undefined;
  /** Workflow and profile limits (the global ones are added by the engine). */
  limits: { workflow: Limits; profile: Limits };
}

/** The task fields a plan depends on. */
export interface PlanSubject {
  workflow: string;
  profile?: string | undefined;
  risk: "low" | "medium" | "high";
  complexity: "small" | "medium" | "large";
  /** Task flags that request stages whatever their conditions (`security_review`, `resource_review`). */
  requested?: StageRequest[] | undefined;
}

const PlanInputSchema = z.strictObject({
  catalog: z.custom<Catalog>((value) => typeof (value as Catalog | undefined)?.digest === "string" && (value as Catalog).workflows instanceof Map, "catalog must come from createCatalog or loadCatalog"),
  subject: z.strictObject({
    workflow: IdSchema,
    profile: IdSchema.optional(),
    risk: z.literal(RISKS),
    complexity: z.literal(COMPLEXITIES),
    requested: z.array(z.literal(STAGE_REQUESTS)).max(STAGE_REQUESTS.length).optional(),
  }),
});

/**
 * Resolves a workflow for a task under an optional profile (`invalid_input` for a catalog not
 * made by `createCatalog`/`loadCatalog` or a subject that is not a strict {@link PlanSubject}): stage overrides applied, conditions
 * judged (unmet → `skipped`, unless a task flag requests the stage), roles tightened by the profile's overrides, disabled roles'
 * stages skipped. Checkpoints are never skipped.
 */
export function buildPlan(catalog: Catalog, subject: PlanSubject): Result<WorkflowPlan, KeelError> {
  const checked = validate(PlanInputSchema, { catalog, subject }, "plan subject");
  if (checked.isErr()) return err(checked.error);
  const workflow = catalog.workflows.get(subject.workflow);
  if (!workflow) return err(new KeelError("not_found", `workflow "${subject.workflow}" is not in the catalog: use one of ${[...catalog.workflows.keys()].join(", ")}`, { details: { workflow: subject.workflow } }));
  let profile: ProfileDefinition | undefined;
  if (subject.profile !== undefined) {
    profile = catalog.profiles.get(subject.profile);
    if (!profile) return err(new KeelError("not_found", `profile "${subject.profile}" is not in the catalog`, { details: { profile: subject.profile } }));
  }
  const overrides = profile?.stageOverrides[workflow.id];
  const stages = applyStageOverrides(workflow.stages, overrides);
  const roles: Record<string, EffectiveRole> = {};
  const planned = stages.map((stage): PlannedStage => {
    if (stage.kind === "checkpoint") return { id: stage.id, kind: "checkpoint", skills: [], reads: [], originalEvidence: false, final: stage.final, prompt: stage.prompt };
    const role = catalog.roles.get(stage.role)!;
    roles[role.id] ??= effectiveRole(role, profile);
    const base: PlannedStage = { id: stage.id, kind: "local", role: role.id, skills: [...stage.skills], reads: [...stage.reads], originalEvidence: stage.originalEvidence, final: false, prompt: "" };
    const skip = skipReason(stage, role, profile, subject, overrides);
    return skip ? { ...base, skip } : base;
  });
  return ok({
    workflow: workflow.id,
    workflowVersion: workflow.version,
    kind: workflow.kind,
    profile: profile?.id ?? null,
    stages: planned,
    roles,
    reviseFrom: workflow.reviseFrom,
    maxCorrections: workflow.maxCorrections,
    instructions: profile?.instructions ?? "",
    authorityDocuments: [...(profile?.authorityDocuments ?? [])],
    ...(profile?.allowedModels ? { allowedModels: [...profile.allowedModels] } : {}),
    ...(profile?.tier ? { tierCap: profile.tier } : {}),
    limits: { workflow: workflow.budget ?? {}, profile: profile?.budget ?? {} },
  });
}

function skipReason(
  stage: Extract<Stage, { kind: "local" }>,
  role: RoleDefinition,
  profile: ProfileDefinition | undefined,
  subject: PlanSubject,
  overrides: ProfileDefinition["stageOverrides"][string] | undefined,
): SkipReason | undefined {
  const override = overrides?.[stage.id];
  if (override && "disable" in override) return "profile_disabled";
  const enabled = profile?.disableRoles.includes(role.id) ? false : profile?.enableRoles.includes(role.id) ? true : role.enabled;
  if (!enabled) return "role_disabled";
  if (stage.when?.requested && subject.requested?.includes(stage.when.requested)) return undefined;
  if (stage.when?.risk && !stage.when.risk.includes(subject.risk)) return "condition";
  if (stage.when?.complexity && !stage.when.complexity.includes(subject.complexity)) return "condition";
  return undefined;
}

/** A role tightened by a profile's override (the catalog already refused any loosening). */
export function effectiveRole(role: RoleDefinition, profile: ProfileDefinition | undefined): EffectiveRole {
  const override = profile?.roleOverrides[role.id] ?? {};
  const tier = override.tier !== undefined && tierRank(override.tier) < tierRank(role.tier) ? override.tier : role.tier;
  return {
    id: role.id,
    skills: [...role.skills],
    minimumStrength: Math.max(role.minimumStrength, override.minimumStrength ?? 0),
    minimumContext: Math.max(role.minimumContext, override.minimumContext ?? 0),
    capabilities: [...new Set([...role.capabilities, ...(override.capabilities ?? [])])].sort(),
    tier,
    ...(role.models ? { models: [...role.models] } : {}),
    timeoutMs: Math.min(role.timeoutMs, override.timeoutMs ?? Number.MAX_SAFE_INTEGER),
    attempts: Math.min(role.attempts, override.attempts ?? Number.MAX_SAFE_INTEGER),
    escalation: role.escalation && (override.escalation ?? true),
  };
}
