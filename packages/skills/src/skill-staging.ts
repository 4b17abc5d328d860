import { promises as fs } from "node:fs";
import { basename, isAbsolute, join, normalize, resolve } from "node:path";
import { KeelError, newId, toKeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { isInside } from "./internal/skill-scan.js";
import { STAGED_SKILLS_DIRECTORY } from "./skill-delivery.js";
import { SkillEntrySchema, type SkillEntry, type SkillView } from "./skill-view.js";

/** Options of {@link stageSkills}. */
export interface StageSkillsOptions {
  /** Directory to stage into, relative to `dir` (default `.agents/skills`). */
  into?: string;
  /** Which skills: the role's `own` (default) or every winning skill (`all`). */
  include?: "own" | "all";
  /** `auto` (default): symlink, copy when links are refused; or force `symlink` or `copy`. */
  method?: "auto" | "symlink" | "copy";
  /**
   * The library's layer directories: every skill staged must really (after links) be inside one
   * of them, else `invalid_input` and nothing is staged. `library.stage` passes them. Without
   * it, the view's own `roots` are the bound, which keeps a view's skills inside its roots but
   * cannot tell a forged root: pass `layers` for views that come from outside.
   */
  layers?: readonly string[];
}

/** What happened to one skill. */
export type StageAction = "linked" | "copied" | "unchanged" | "skipped";

/** One skill's staging outcome. */
export interface StagedSkill {
  /** The skill name. */
  name: string;
  /** The skill directory staged (real path). */
  source: string;
  /** The staged path, `<staging directory>/<skill directory name>`. */
  target: string;
  /**
   * `linked` / `copied`: created now; `unchanged`: already there (a link to the same directory,
   * or a copy with the same SKILL.md); `skipped`: something else is there and was left alone.
   */
  action: StageAction;
  /** Why a skill was skipped. */
  reason?: string;
}

/** The outcome of {@link stageSkills}. */
export interface StageReport {
  /** The staging directory (absolute). */
  directory: string;
  /** Always `staged`. */
  mode: "staged";
  /** One entry per skill, in view order. */
  skills: StagedSkill[];
}

const StageOptionsSchema = z
  .object({
    into: z
      .string()
      .min(1)
      .max(512)
      .refine((value) => !isAbsolute(value) && !normalize(value).split(/[\\/]/).includes(".."), {
        message: "must be a relative path inside the working directory",
      })
      .optional(),
    include: z.enum(["own", "all"]).optional(),
    method: z.enum(["auto", "symlink", "copy"]).optional(),
    layers: z.array(z.string().min(1).max(4096)).min(1).max(64).optional(),
  })
  .strict();

const StageViewSchema = z.object({
  role: z.string().min(1),
  own: z.array(SkillEntrySchema),
  skills: z.array(SkillEntrySchema),
  roots: z.array(z.object({ path: z.string().min(1) }).loose()).optional(),
});

/**
 * Refuses (`invalid_input`) any skill whose real directory, or whose real SKILL.md, is not inside
 * one of `bounds` (real paths): a forged entry must never be linked into a scanned directory.
 */
async function checkMembership(skills: readonly SkillEntry[], bounds: readonly string[]): Promise<void> {
  const roots = (await Promise.all(bounds.map((bound) => fs.realpath(bound).catch(() => undefined)))).filter((root): root is string => root !== undefined);
  for (const skill of skills) {
    const directory = await fs.realpath(skill.directory).catch(() => undefined);
    const file = await fs.realpath(skill.path).catch(() => undefined);
    const inside = (path: string | undefined) => path !== undefined && roots.some((root) => isInside(root, path));
    if (!inside(directory) || !inside(file) || (file !== undefined && directory !== undefined && !isInside(directory, file))) {
      throw new KeelError("invalid_input", `skill "${skill.name}" at ${skill.directory} is not inside any layer of the skill library: it is not staged`, {
        details: { name: skill.name, directory: skill.directory },
        retryable: false,
      });
    }
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as { code?: string }).code : undefined;
}

async function sameFileContent(left: string, right: string): Promise<boolean> {
  try {
    const [a, b] = await Promise.all([fs.readFile(left), fs.readFile(right)]);
    return a.equals(b);
  } catch {
    return false;
  }
}

/** Whether what is at `target` already is `skill` (a link to it, or a copy with the same SKILL.md). */
async function isAlreadyStaged(target: string, skill: SkillEntry): Promise<boolean> {
  const stat = await fs.lstat(target);
  if (stat.isSymbolicLink()) {
    const real = await fs.realpath(target).catch(() => undefined);
    // A managed skill's directory is its link: compare where both lead now.
    return real !== undefined && (real === skill.directory || real === (await fs.realpath(skill.directory).catch(() => undefined)));
  }
  return stat.isDirectory() && sameFileContent(join(target, basename(skill.path)), skill.path);
}

async function copySkill(skill: SkillEntry, target: string): Promise<void> {
  const temporary = `${target}.keel-${newId()}.tmp`;
  // A managed skill's directory is a link to its version: copy what it leads to, not the link.
  const from = await fs.realpath(skill.directory);
  try {
    await fs.cp(from, temporary, { recursive: true, errorOnExist: true, force: false, verbatimSymlinks: true });
    await fs.rename(temporary, target);
  } finally {
    await fs.rm(temporary, { recursive: true, force: true });
  }
}

async function stageOne(skill: SkillEntry, target: string, method: "auto" | "symlink" | "copy"): Promise<StagedSkill> {
  const base = { name: skill.name, source: skill.directory, target };
  const exists = await fs.lstat(target).then(
    () => true,
    (error: unknown) => (errorCode(error) === "ENOENT" ? false : Promise.reject(error)),
  );
  if (exists) {
    return (await isAlreadyStaged(target, skill)) ? { ...base, action: "unchanged" } : { ...base, action: "skipped", reason: "something else is already there" };
  }
  if (method !== "copy") {
    try {
      await fs.symlink(skill.directory, target, "dir");
      return { ...base, action: "linked" };
    } catch (error) {
      if (errorCode(error) === "EEXIST") return { ...base, action: "skipped", reason: "created concurrently by someone else" };
      if (method === "symlink") throw error;
    }
  }
  try {
    await copySkill(skill, target);
  } catch (error) {
    if (errorCode(error) === "EEXIST" || errorCode(error) === "ENOTEMPTY") {
      return { ...base, action: "skipped", reason: "created concurrently by someone else" };
    }
    throw error;
  }
  return { ...base, action: "copied" };
}

/**
 * Stages a role's skills for a CLI that scans a directory: links (or, where links are refused,
 * copies) each skill directory into `<dir>/.agents/skills/<skill directory name>`. Never
 * clobbers: an existing entry is left alone (`unchanged` when it already is that skill, else
 * `skipped`), and two skills with the same directory name stage only the first. Copies appear
 * whole or not at all (copied to a temporary name, then renamed). Entries staged earlier for
 * skills no longer in the view are not removed. Every skill must really be inside the library's
 * `layers` (or, without that option, the view's roots): `invalid_input` otherwise, before anything
 * is staged.
 */
export function stageSkills(view: Pick<SkillView, "role" | "own" | "skills"> & Partial<Pick<SkillView, "roots">>, dir: string, options: StageSkillsOptions = {}): ResultAsync<StageReport, KeelError> {
  const checked = validate(StageViewSchema, view, "skill view")
    .andThen(() => validate(z.string().min(1).max(4096), dir, "staging working directory"))
    .andThen(() => validate(StageOptionsSchema, options, "stage options"));
  if (checked.isErr()) return errAsync(checked.error);
  const directory = resolve(dir, options.into ?? STAGED_SKILLS_DIRECTORY);
  const chosen = options.include === "all" ? view.skills : view.own;
  const method = options.method ?? "auto";
  const bounds = options.layers ?? view.roots?.map((root) => root.path);
  if (!bounds) return errAsync(new KeelError("invalid_input", "stageSkills needs the view's roots or the library's layers to check where skills are: pass a resolved view or options.layers"));
  const run = async (): Promise<StageReport> => {
    await checkMembership(chosen, bounds);
    await fs.mkdir(directory, { recursive: true });
    const skills: StagedSkill[] = [];
    const taken = new Set<string>();
    for (const skill of chosen) {
      const target = join(directory, basename(skill.directory));
      if (taken.has(target)) {
        skills.push({ name: skill.name, source: skill.directory, target, action: "skipped", reason: "an earlier skill has the same directory name" });
        continue;
      }
      taken.add(target);
      skills.push(await stageOne(skill, target, method));
    }
    return { directory, mode: "staged", skills };
  };
  return ResultAsync.fromThrowable(run, (error) =>
    KeelError.is(error) ? error : toKeelError(error, "io_failed", `staging skills into ${directory} failed`),
  )();
}
