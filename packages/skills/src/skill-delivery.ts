import { KEEL_BACKEND_IDS, type KeelError, validate } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";
import { SkillEntrySchema, type SkillView } from "./skill-view.js";

/** The backend ids Keel knows how to deliver skills to (the adapters of `@keel/backends`). */
export const SKILL_BACKEND_IDS = [...KEEL_BACKEND_IDS, "scripted"] as const;

/** A backend id of {@link SKILL_BACKEND_IDS}. */
export type SkillBackendId = (typeof SKILL_BACKEND_IDS)[number];

/**
 * How skills reach a backend:
 * - `native`: the backend adapter takes the skill paths and hands them to the CLI's own loader
 *   (pi: `--no-skills --skill <path>…`; Claude Code: `--add-dir` of a directory whose
 *   `.claude/skills` links them; OpenCode: `skills.paths` in `OPENCODE_CONFIG_CONTENT`);
 * - `staged`: the CLI scans `<cwd>/.agents/skills/`, so the role's skills are linked there
 *   (`stageSkills`);
 * - `prompt`: the CLI has neither, so the skill contract (`renderSkillContract`) goes in the
 *   prompt and the model reads SKILL.md files by path.
 */
export type SkillDeliveryMode = "native" | "staged" | "prompt";

/**
 * The delivery mode of each backend, as its `@keel/backends` adapter declares it. From the
 * backends research: pi has a per-run `--skill` flag; Claude Code loads `.claude/skills` of every
 * `--add-dir` directory and OpenCode reads `skills.paths` from per-run config, so their adapters
 * take paths too; Codex, Copilot, Cursor, Gemini and Grok (Grok Build and grok-cli) only scan
 * `.agents/skills` in the working directory; Qoder scans only `.qoder/skills`, DeepSeek has no
 * skills and the scripted backend is not a CLI: they get the contract in the prompt.
 */
export const SKILL_DELIVERY: Readonly<Record<SkillBackendId, SkillDeliveryMode>> = Object.freeze({
  "claude-code": "native",
  codex: "staged",
  pi: "native",
  opencode: "native",
  copilot: "staged",
  cursor: "staged",
  gemini: "staged",
  grok: "staged",
  qoder: "prompt",
  deepseek: "prompt",
  scripted: "prompt",
});

/** Where staged skills go, relative to the backend's working directory. */
export const STAGED_SKILLS_DIRECTORY = ".agents/skills";

/** zod schema of a {@link SkillBackendId}. */
export const SkillBackendIdSchema: z.ZodType<SkillBackendId> = z.enum(SKILL_BACKEND_IDS);

/** What a backend needs to receive a role's skills (see `skillArgsFor`). */
export interface SkillDelivery {
  /** The backend. */
  backend: SkillBackendId;
  /** How the skills reach it. */
  mode: SkillDeliveryMode;
  /**
   * CLI arguments that deliver the skills by themselves: pi's `--no-skills --skill <path> …`.
   * Empty for every other backend (the Claude Code and OpenCode adapters build their mechanism
   * from `skillPaths`).
   */
  args: string[];
  /** SKILL.md paths of the role's OWN skills: for the adapter (`native`) or to stage; empty in `prompt` mode. */
  skillPaths: string[];
  /** For `staged`: the directory, relative to the working directory, to stage into; else `null`. */
  stageInto: string | null;
}

const DeliveryViewSchema = z.object({ role: z.string().min(1), own: z.array(SkillEntrySchema) });

/** The delivery mode of a backend; `invalid_input` for an unknown backend id. */
export function skillDeliveryFor(backendId: string): Result<SkillDeliveryMode, KeelError> {
  return validate(SkillBackendIdSchema, backendId, "backend id").map((id) => SKILL_DELIVERY[id]);
}

/**
 * The skill delivery for one backend run of `view`'s role. pi gets `--no-skills` (no ambient
 * skills) and `--skill <path>` per OWN skill; the other native backends get the paths; staged
 * backends get the paths to stage and where; prompt backends get nothing (render the contract
 * instead). REFERENCE skills are never loaded natively or staged: the contract lists them.
 */
export function skillArgsFor(backendId: string, view: Pick<SkillView, "role" | "own">): Result<SkillDelivery, KeelError> {
  return skillDeliveryFor(backendId).andThen((mode) =>
    validate(DeliveryViewSchema, view, "skill view").map((checked): SkillDelivery => {
      const backend = backendId as SkillBackendId;
      const skillPaths = mode === "prompt" ? [] : checked.own.map((skill) => skill.path);
      if (mode === "native") {
        const args = backend === "pi" ? ["--no-skills", ...skillPaths.flatMap((path) => ["--skill", path])] : [];
        return { backend, mode, args, skillPaths, stageInto: null };
      }
      return { backend, mode, args: [], skillPaths, stageInto: mode === "staged" ? STAGED_SKILLS_DIRECTORY : null };
    }),
  );
}
