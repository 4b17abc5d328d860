import {
  tierRank,
  type LocalStage,
  type ProfileDefinition,
  type RoleDefinition,
  type SkillDefinition,
  type Stage,
  type WorkflowDefinition,
} from "../definition-schemas.js";

/** One problem found while loading a catalog. */
export interface CatalogIssue {
  /** The file (or `<builtin>`, `<objects>/kind[i]`) the definition came from. */
  file: string;
  /** The path inside the document (`stages.2.reads.0`), empty for the whole document. */
  path: string;
  /** What is wrong and what to do. */
  reason: string;
  /** Which rule: `schema`, `file`, `limit`, `duplicate`, `shadowing`, `reference`, `composition`, `order`, `final_checkpoint`, `override`. */
  rule: string;
}

/** A parsed definition and where it came from. */
export interface Located<T> {
  value: T;
  file: string;
  builtin: boolean;
}

/** Everything parsed, by kind, before cross-checks. */
export interface ParsedDefinitions {
  skills: Located<SkillDefinition>[];
  roles: Located<RoleDefinition>[];
  workflows: Located<WorkflowDefinition>[];
  profiles: Located<ProfileDefinition>[];
}

/** Indexes one kind by id, reporting duplicates in one root and project ids shadowing built-ins. */
export function indexById<T extends { id: string }>(entries: Located<T>[], kind: string, issues: CatalogIssue[]): Map<string, Located<T>> {
  const byId = new Map<string, Located<T>>();
  for (const entry of entries) {
    const known = byId.get(entry.value.id);
    if (!known) {
      byId.set(entry.value.id, entry);
    } else if (known.builtin !== entry.builtin) {
      issues.push({
        file: entry.builtin ? known.file : entry.file,
        path: "id",
        rule: "shadowing",
        reason: `${kind} id "${entry.value.id}" is built in: a project catalog cannot shadow it; choose another id`,
      });
    } else {
      issues.push({ file: entry.file, path: "id", rule: "duplicate", reason: `duplicate ${kind} id "${entry.value.id}" (also in ${known.file})` });
    }
  }
  return byId;
}

/** Checks every cross-reference of a catalog. */
export function checkReferences(
  skills: Map<string, Located<SkillDefinition>>,
  roles: Map<string, Located<RoleDefinition>>,
  workflows: Map<string, Located<WorkflowDefinition>>,
  profiles: Map<string, Located<ProfileDefinition>>,
  issues: CatalogIssue[],
): void {
  for (const { value: role, file } of roles.values()) {
    role.skills.forEach((skill, index) => {
      if (!skills.has(skill)) issues.push({ file, path: `skills.${index}`, rule: "reference", reason: `role "${role.id}" names skill "${skill}", which is not defined` });
    });
  }
  for (const { value: workflow, file } of workflows.values()) {
    issues.push(...checkStages(workflow.stages, workflow, roles, skills).map((issue) => ({ ...issue, file })));
  }
  for (const { value: profile, file } of profiles.values()) checkProfile(profile, file, roles, workflows, skills, issues);
}

type StageIssue = Omit<CatalogIssue, "file">;

/** The stage rules of a workflow (also used to revalidate a profile's stage overrides). */
export function checkStages(
  stages: readonly Stage[],
  workflow: Pick<WorkflowDefinition, "id" | "reviseFrom">,
  roles: Map<string, Located<RoleDefinition>>,
  skills: Map<string, Located<SkillDefinition>>,
  pathPrefix = "stages",
): StageIssue[] {
  const issues: StageIssue[] = [];
  const position = new Map<string, number>();
  stages.forEach((stage, index) => {
    if (position.has(stage.id)) issues.push({ path: `${pathPrefix}.${index}.id`, rule: "duplicate", reason: `duplicate stage id "${stage.id}"` });
    else position.set(stage.id, index);
  });
  let segmentStart = 0;
  stages.forEach((stage, index) => {
    const at = `${pathPrefix}.${index}`;
    if (stage.kind === "checkpoint") {
      if (stage.final && index !== stages.length - 1) issues.push({ path: `${at}.final`, rule: "order", reason: `checkpoint "${stage.id}" is final but stages follow it: only the last stage can be final` });
      segmentStart = index + 1;
      return;
    }
    issues.push(...checkLocalStage(stage, at, roles, skills));
    stage.reads.forEach((read, readIndex) => {
      const readAt = position.get(read);
      const where = `${at}.reads.${readIndex}`;
      if (readAt === undefined) issues.push({ path: where, rule: "reference", reason: `stage "${stage.id}" reads "${read}", which is not a stage of workflow "${workflow.id}"` });
      else if (readAt >= index) issues.push({ path: where, rule: "order", reason: `stage "${stage.id}" reads "${read}", which runs at or after it: a stage can read only earlier stages` });
      else if (readAt < segmentStart) issues.push({ path: where, rule: "order", reason: `stage "${stage.id}" reads "${read}" across a checkpoint: only earlier stages after the last checkpoint can feed a stage` });
      else if (stages[readAt]?.kind === "checkpoint") issues.push({ path: where, rule: "order", reason: `stage "${stage.id}" reads checkpoint "${read}": only local stages produce handoff packets` });
    });
    if (stage.originalEvidence && stage.reads.length > 0) {
      issues.push({ path: `${at}.reads`, rule: "order", reason: `stage "${stage.id}" takes the original evidence only and cannot read other stages' claims` });
    }
  });
  const last = stages[stages.length - 1];
  if (!last || last.kind !== "checkpoint" || !last.final) {
    issues.push({ path: pathPrefix, rule: "final_checkpoint", reason: `workflow "${workflow.id}" must end with a final checkpoint (kind: checkpoint, final: true)` });
  }
  const revise = position.get(workflow.reviseFrom);
  if (revise === undefined || stages[revise]?.kind !== "local") {
    issues.push({ path: "reviseFrom", rule: "reference", reason: `reviseFrom "${workflow.reviseFrom}" must name a local stage of workflow "${workflow.id}"` });
  }
  return issues;
}

function checkLocalStage(stage: LocalStage, at: string, roles: Map<string, Located<RoleDefinition>>, skills: Map<string, Located<SkillDefinition>>): StageIssue[] {
  const issues: StageIssue[] = [];
  const role = roles.get(stage.role)?.value;
  if (!role) issues.push({ path: `${at}.role`, rule: "reference", reason: `stage "${stage.id}" names role "${stage.role}", which is not defined` });
  stage.skills.forEach((skill, index) => {
    if (!skills.has(skill)) issues.push({ path: `${at}.skills.${index}`, rule: "reference", reason: `stage "${stage.id}" names skill "${skill}", which is not defined` });
    else if (role && !role.skills.includes(skill)) {
      issues.push({ path: `${at}.skills.${index}`, rule: "composition", reason: `role "${role.id}" does not support skill "${skill}" (it supports ${role.skills.join(", ")})` });
    }
  });
  return issues;
}

function checkProfile(
  profile: ProfileDefinition,
  file: string,
  roles: Map<string, Located<RoleDefinition>>,
  workflows: Map<string, Located<WorkflowDefinition>>,
  skills: Map<string, Located<SkillDefinition>>,
  issues: CatalogIssue[],
): void {
  const push = (path: string, rule: string, reason: string) => issues.push({ file, path, rule, reason });
  for (const field of ["enableRoles", "disableRoles"] as const) {
    profile[field].forEach((role, index) => {
      if (!roles.has(role)) push(`${field}.${index}`, "reference", `profile "${profile.id}" names role "${role}", which is not defined`);
    });
  }
  for (const role of profile.enableRoles) if (profile.disableRoles.includes(role)) push("disableRoles", "override", `role "${role}" is both enabled and disabled`);
  for (const [roleId, override] of Object.entries(profile.roleOverrides)) {
    const base = roles.get(roleId)?.value;
    if (!base) {
      push(`roleOverrides.${roleId}`, "reference", `profile "${profile.id}" overrides role "${roleId}", which is not defined`);
      continue;
    }
    for (const problem of loosenings(base, override)) push(`roleOverrides.${roleId}.${problem.field}`, "override", problem.reason);
  }
  for (const [workflowId, overrides] of Object.entries(profile.stageOverrides)) {
    const workflow = workflows.get(workflowId)?.value;
    if (!workflow) {
      push(`stageOverrides.${workflowId}`, "reference", `profile "${profile.id}" overrides workflow "${workflowId}", which is not defined`);
      continue;
    }
    for (const [stageId, override] of Object.entries(overrides)) {
      const stage = workflow.stages.find((candidate) => candidate.id === stageId);
      const at = `stageOverrides.${workflowId}.${stageId}`;
      if (!stage) push(at, "reference", `workflow "${workflowId}" has no stage "${stageId}"`);
      else if (stage.kind === "checkpoint") push(at, "override", `stage "${stageId}" is a checkpoint: a profile cannot remove, replace or make a checkpoint conditional`);
      else if ("replace" in override && override.replace.id !== stageId) push(`${at}.replace.id`, "override", `a replacement keeps the stage id "${stageId}"`);
    }
    const stages = applyStageOverrides(workflow.stages, overrides);
    for (const issue of checkStages(stages, workflow, roles, skills)) push(`stageOverrides.${workflowId}:${issue.path}`, issue.rule, issue.reason);
  }
}

/** The stages after a profile's stage overrides: disabled stages are kept and marked, replaced ones swapped. */
export function applyStageOverrides(stages: readonly Stage[], overrides: Record<string, { disable: true } | { replace: LocalStage }> | undefined): Stage[] {
  if (!overrides) return [...stages];
  return stages.map((stage) => {
    const override = overrides[stage.id];
    if (!override || stage.kind === "checkpoint" || !("replace" in override)) return stage;
    return { ...override.replace, id: stage.id };
  });
}

/** Each way an override would loosen its role (an error: overrides only tighten). */
export function loosenings(base: RoleDefinition, override: ProfileDefinition["roleOverrides"][string]): { field: string; reason: string }[] {
  const problems: { field: string; reason: string }[] = [];
  const loosen = (field: string, reason: string) => problems.push({ field, reason: `${reason}: a profile can only tighten role "${base.id}"` });
  if (override.minimumStrength !== undefined && override.minimumStrength < base.minimumStrength) loosen("minimumStrength", `minimumStrength ${override.minimumStrength} is below the role's ${base.minimumStrength}`);
  if (override.minimumContext !== undefined && override.minimumContext < base.minimumContext) loosen("minimumContext", `minimumContext ${override.minimumContext} is below the role's ${base.minimumContext}`);
  if (override.timeoutMs !== undefined && override.timeoutMs > base.timeoutMs) loosen("timeoutMs", `timeoutMs ${override.timeoutMs} is above the role's ${base.timeoutMs}`);
  if (override.attempts !== undefined && override.attempts > base.attempts) loosen("attempts", `attempts ${override.attempts} is above the role's ${base.attempts}`);
  if (override.tier !== undefined && tierRank(override.tier) > tierRank(base.tier)) loosen("tier", `tier ${override.tier} is above the role's ${base.tier}`);
  if (override.escalation === true && !base.escalation) loosen("escalation", "escalation is off for the role");
  return problems;
}
