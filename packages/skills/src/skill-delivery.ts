import { type KeelError, validate } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";
import { SkillEntrySchema, type SkillView } from "./skill-view.js";

/**
 * How skills reach a backend — what its adapter declares as `backend.capabilities.skills`
 * (`@keel/backend`); the adapters own the mechanism, this package names no backend:
 * - `native`: the adapter takes the OWN skills' paths and hands them to the CLI's own loader (a
 *   flag, a per-run configuration or a directory it points the CLI at);
 * - `staged`: the CLI scans `<cwd>/.agents/skills/`, so the role's skills are linked there
 *   (`stageSkills`);
 * - `prompt`: the CLI has neither, so the skill contract (`renderSkillContract`) goes in the
 *   prompt and the model reads SKILL.md files by path.
 */
export type SkillDeliveryMode = "native" | "staged" | "prompt";

/** The delivery modes, in the order above. */
export const SKILL_DELIVERY_MODES: readonly SkillDeliveryMode[] = ["native", "staged", "prompt"];

/** zod schema of a {@link SkillDeliveryMode}. */
export const SkillDeliveryModeSchema: z.ZodType<SkillDeliveryMode> = z.enum(["native", "staged", "prompt"]);

/** Where staged skills go, relative to the backend's working directory. */
export const STAGED_SKILLS_DIRECTORY = ".agents/skills";

/** What a backend needs to receive a role's skills (see {@link planSkillDelivery}). */
export interface SkillDelivery {
  /** How the skills reach it. */
  mode: SkillDeliveryMode;
  /** SKILL.md paths of the role's OWN skills: for the adapter (`native`) or to stage; empty in `prompt` mode. */
  skillPaths: string[];
  /** For `staged`: the directory, relative to the working directory, to stage into; else `null`. */
  stageInto: string | null;
}

const DeliveryViewSchema = z.object({ role: z.string().min(1), own: z.array(SkillEntrySchema) });

/**
 * The skill delivery of `view`'s role for a backend whose capabilities say `mode`: `native`
 * backends get the OWN skills' paths (their adapter turns them into flags or configuration),
 * `staged` backends get the paths to stage and where, `prompt` backends get nothing (render the
 * contract instead). REFERENCE skills are never loaded natively or staged: the contract lists
 * them.
 *
 * @returns the delivery, or `invalid_input` for an unknown mode or a malformed view.
 *
 * @example
 * ```ts
 * planSkillDelivery(backend.capabilities.skills, view); // { mode: "native", skillPaths: [".../SKILL.md"], stageInto: null }
 * ```
 */
export function planSkillDelivery(mode: SkillDeliveryMode, view: Pick<SkillView, "role" | "own">): Result<SkillDelivery, KeelError> {
  return validate(SkillDeliveryModeSchema, mode, "skill delivery mode").andThen((checkedMode) =>
    validate(DeliveryViewSchema, view, "skill view").map(
      (checked): SkillDelivery => ({
        mode: checkedMode,
        skillPaths: checkedMode === "prompt" ? [] : checked.own.map((skill) => skill.path),
        stageInto: checkedMode === "staged" ? STAGED_SKILLS_DIRECTORY : null,
      }),
    ),
  );
}
