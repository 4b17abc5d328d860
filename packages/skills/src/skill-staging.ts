import { promises as fs } from "node:fs";
import { basename, isAbsolute, join, normalize, resolve } from "node:path";
import { KeelError, newId, toKeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
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
  })
  .strict();

const StageViewSchema = z.object({ role: z.string().min(1), own: z.array(SkillEntrySchema), skills: z.array(SkillEntrySchema) });

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
    return real === skill.directory;
  }
  return stat.isDirectory() && sameFileContent(join(target, basename(skill.path)), skill.path);
}

async function copySkill(skill: SkillEntry, target: string): Promise<void> {
  const temporary = `${target}.keel-${newId()}.tmp`;
  try {
    await fs.cp(skill.directory, temporary, { recursive: true, errorOnExist: true, force: false, verbatimSymlinks: true });
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
 * skills no longer in the view are not removed.
 */
export function stageSkills(view: Pick<SkillView, "role" | "own" | "skills">, dir: string, options: StageSkillsOptions = {}): ResultAsync<StageReport, KeelError> {
  const checked = validate(StageViewSchema, view, "skill view")
    .andThen(() => validate(z.string().min(1).max(4096), dir, "staging working directory"))
    .andThen(() => validate(StageOptionsSchema, options, "stage options"));
  if (checked.isErr()) return errAsync(checked.error);
  const directory = resolve(dir, options.into ?? STAGED_SKILLS_DIRECTORY);
  const chosen = options.include === "all" ? view.skills : view.own;
  const method = options.method ?? "auto";
  const run = async (): Promise<StageReport> => {
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
