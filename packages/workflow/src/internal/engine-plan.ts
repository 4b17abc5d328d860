import { KeelError, digest, utf8Bytes } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import type { Task } from "../engine-requests.js";
import { selectModel } from "../model-select.js";
import type { RunDoc, TaskIdentity } from "../run-state.js";
import { buildPlan, type WorkflowPlan } from "../workflow-plan.js";
import { STAGE_REQUESTS, type StageRequest } from "../definition-schemas.js";
import type { EngineContext } from "./engine-context.js";

/** How routing would go for a planned local stage, judged at plan time from the evidence size. */
export type PlannedRouting =
  | { kind: "selected"; model: string; candidates: string[] }
  | { kind: "refused"; gate: string; reason: string };

/** A plan for a task with what it depends on. */
export interface TaskPlan {
  plan: WorkflowPlan;
  identity: TaskIdentity;
  definitionsDigest: string;
  routing: Record<string, PlannedRouting>;
}

/** The task fields fixed under one task id. */
export function identityOf(task: Task): TaskIdentity {
  // The flags are kept only when set, so a task started before they existed keeps its identity.
  return {
    objective: task.objective,
    workflow: task.workflow,
    profile: task.profile ?? null,
    scope: [...task.scope],
    risk: task.risk,
    complexity: task.complexity,
    ...(task.security_review ? { security_review: true } : {}),
    ...(task.resource_review ? { resource_review: true } : {}),
  };
}

/** The stages a task requests explicitly, from its flags. */
export function requestedOf(task: Pick<Task, "security_review" | "resource_review">): StageRequest[] {
  return STAGE_REQUESTS.filter((flag) => task[flag] === true);
}

/** Digest of everything a plan depends on in the catalog: the plan itself and the skill and role definitions it uses. */
export function definitionsDigestOf(context: EngineContext, plan: WorkflowPlan): string {
  const skills = [...new Set(plan.stages.flatMap((stage) => stage.skills))].sort().map((id) => context.catalog.skills.get(id) ?? null);
  const roles = Object.keys(plan.roles).sort().map((id) => context.catalog.roles.get(id) ?? null);
  return digest({ plan, skills, roles });
}

/** The definitions digest a run would have if planned now; a different one means the catalog changed. */
export function currentDefinitionsDigest(context: EngineContext, run: RunDoc): string {
  const plan = buildPlan(context.catalog, { workflow: run.task.workflow, profile: run.task.profile ?? undefined, risk: run.task.risk, complexity: run.task.complexity, requested: requestedOf(run.task) });
  return plan.isOk() ? definitionsDigestOf(context, plan.value) : "missing";
}

/** Plans a task: the workflow resolved under its profile, and a first look at routing. */
export function planTask(context: EngineContext, task: Task): Result<TaskPlan, KeelError> {
  const planned = buildPlan(context.catalog, { workflow: task.workflow, profile: task.profile, risk: task.risk, complexity: task.complexity, requested: requestedOf(task) });
  if (planned.isErr()) return err(planned.error);
  const plan = planned.value;
  const evidenceBytes = utf8Bytes(JSON.stringify(task.evidence)) + utf8Bytes(task.objective) + 2048;
  const routing: Record<string, PlannedRouting> = {};
  for (const stage of plan.stages) {
    if (stage.kind !== "local" || stage.skip) continue;
    const role = plan.roles[stage.role!]!;
    const skill = context.catalog.skills.get(stage.skills[0]!);
    if (!skill) return err(new KeelError("not_found", `skill "${stage.skills[0]}" is not in the catalog`));
    const selection = selectModel({
      models: context.models,
      role,
      capabilities: skill.capabilities,
      tierCap: plan.tierCap,
      allowedModels: plan.allowedModels,
      preference: context.preference,
      promptBytes: evidenceBytes,
      outputBytes: skill.outputBytes,
    });
    routing[stage.id] = selection.kind === "selected" ? { kind: "selected", model: selection.model.id, candidates: selection.candidates } : { kind: "refused", gate: selection.gate, reason: selection.reason };
  }
  return ok({ plan, identity: identityOf(task), definitionsDigest: definitionsDigestOf(context, plan), routing });
}
