import { mkdir, mkdtemp, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { KeelError } from "@keel/core";
import { ResultAsync } from "neverthrow";

/** A temporary directory holding links to a turn's skills, removed by `cleanup`. */
export interface StagedSkills {
  /** The temporary directory (pass it to the CLI). */
  dir: string;
  /** Removes the directory (the skills it links to are untouched). */
  cleanup: () => Promise<void>;
}

/**
 * Links each skill directory into `<tmp>/<subdir>/<skill name>` (the first of two skills with the
 * same name wins — the skill view lists OWN before REFERENCE), for CLIs that load skills from a
 * directory they are pointed at per run. A path may name the skill directory or its `SKILL.md`;
 * anything else is `invalid_input`.
 */
export function stageSkillLinks(backend: string, skillPaths: readonly string[], subdir: string): ResultAsync<StagedSkills, KeelError> {
  const stage = ResultAsync.fromThrowable(
    async (): Promise<StagedSkills> => {
      const skillDirs: string[] = [];
      for (const path of skillPaths) {
        const info = await stat(path).catch(() => undefined);
        if (!info?.isDirectory() && !info?.isFile()) {
          throw new KeelError("invalid_input", `skill path ${path} does not exist: pass skill directories or their SKILL.md files`, {
            details: { backend, skillPath: path },
          });
        }
        skillDirs.push(info.isDirectory() ? path : dirname(path));
      }
      const dir = await mkdtemp(join(tmpdir(), `keel-${backend}-skills-`));
      const cleanup = () => rm(dir, { recursive: true, force: true });
      try {
        const root = join(dir, subdir);
        await mkdir(root, { recursive: true });
        const seen = new Set<string>();
        for (const path of skillDirs) {
          const name = basename(path);
          if (seen.has(name)) continue;
          seen.add(name);
          await symlink(path, join(root, name), "dir");
        }
      } catch (cause) {
        await cleanup();
        throw cause;
      }
      return { dir, cleanup };
    },
    (cause) =>
      KeelError.is(cause)
        ? cause
        : new KeelError("io_failed", `could not stage skills for ${backend}: ${String(cause)}`, { details: { backend }, cause }),
  );
  return stage();
}
