import { dirname, join } from "node:path";
import { KeelError, newId } from "@keel/core";
import { errnoOf, type SkillIo } from "../skill-io.js";
import { listSkillTree, METADATA_FILE, readAndDigest, type SkillTreeLimits } from "./skill-tree.js";

/** What {@link writeSkill} installs. */
export interface SkillWrite {
  io: SkillIo;
  /** The role directory (`<layer>/<role>`), which may not exist yet. */
  roleDirectory: string;
  /** The skill's directory name. */
  name: string;
  /** Directories of the tree relative to the skill, parents first. */
  directories: readonly string[];
  /** Files of the tree, relative to the skill as on disk. */
  files: readonly { diskRelative: string; bytes: Uint8Array }[];
  /** The metadata document, written into the staged tree so that it is swapped in with it. */
  metadata: Uint8Array | null;
  /** Replace an existing skill (else `conflict`). */
  overwrite: boolean;
  /** What must be at the target now (checked under the caller's lock): nothing, or a tree with this digest. */
  expect?: { absent: true } | { digest: string } | undefined;
  /** Limits used when digesting the current target for `expect`. */
  limits: SkillTreeLimits;
}

/** The outcome of {@link writeSkill}. */
export interface SkillWriteResult {
  target: string;
  replaced: boolean;
  /** Paths that could not be removed after the swap succeeded (an old version's backup). */
  leftovers: string[];
}

async function exists(io: SkillIo, path: string): Promise<"directory" | "other" | false> {
  try {
    const stat = await io.lstat(path);
    return stat.isDirectory() ? "directory" : "other";
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
    throw error;
  }
}

/** Creates `directory` and any missing ancestors; returns those created, outermost first. */
export async function makeDirectories(io: SkillIo, directory: string): Promise<string[]> {
  const missing: string[] = [];
  let current = directory;
  while ((await exists(io, current)) === false) {
    missing.push(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  const created: string[] = [];
  for (const path of missing.reverse()) {
    try {
      await io.mkdir(path);
      created.push(path);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
    }
  }
  return created;
}

/** Removes directories created by {@link makeDirectories} (innermost first), where still empty. */
export async function removeCreated(io: SkillIo, created: readonly string[]): Promise<void> {
  for (const path of [...created].reverse()) {
    try {
      await io.rmdir(path);
    } catch {
      // someone else put something there meanwhile: it stays
    }
  }
}

/** The digest of the skill tree at `directory` (metadata excluded), or `null` when nothing is there. */
export async function digestOfInstalled(io: SkillIo, directory: string, limits: SkillTreeLimits): Promise<string | null> {
  if ((await exists(io, directory)) !== "directory") return null;
  const listing = await listSkillTree(io, directory, limits);
  if (listing.problems.length > 0) return `unreadable:${listing.problems.length}`;
  return (await readAndDigest(io, listing)).digest;
}

/**
 * Installs a skill tree at `<roleDirectory>/<name>` atomically. The caller holds the role's lock.
 *
 * Steps: check the target (and `expect`) → stage the whole tree and its metadata in a sibling
 * `.keel-staging.<name>.<id>` (every file fsynced) → move an existing target aside to
 * `.keel-backup.<name>.<id>` → rename the staging into place → fsync the role directory → remove
 * the backup. On a failure before the swap the staging is removed; on a failure of the swap the
 * backup is renamed back. Either way the role directory is as it was (directories created for the
 * import are removed). When the restore itself fails, staging and backup are kept and named in
 * the error's details (`restored: false`), never deleted.
 */
export async function writeSkill(write: SkillWrite): Promise<SkillWriteResult> {
  const { io, roleDirectory, name } = write;
  const target = join(roleDirectory, name);
  const found = await exists(io, target);
  if (found === "other") {
    throw new KeelError("conflict", `${target} exists and is not a directory (a file or a link): remove it first`, { details: { target }, retryable: false });
  }
  if (write.expect) {
    const current = await digestOfInstalled(io, target, write.limits);
    const expected = "absent" in write.expect ? null : write.expect.digest;
    if (current !== expected) {
      throw new KeelError("conflict", `skill "${name}" changed since the plan was made (expected ${expected ?? "nothing"}, found ${current ?? "nothing"}): plan again`, {
        details: { target, expected, found: current },
        retryable: false,
      });
    }
  } else if (found && !write.overwrite) {
    throw new KeelError("conflict", `skill "${name}" already exists at ${target}: pass overwrite to replace it`, { details: { target }, retryable: false });
  }
  const created = await makeDirectories(io, roleDirectory);
  const id = newId();
  const staging = join(roleDirectory, `.keel-staging.${name}.${id}`);
  const backup = join(roleDirectory, `.keel-backup.${name}.${id}`);
  try {
    await io.mkdir(staging);
    for (const directory of write.directories) await io.mkdir(join(staging, directory));
    for (const file of write.files) await io.writeFile(join(staging, file.diskRelative), file.bytes);
    if (write.metadata) await io.writeFile(join(staging, METADATA_FILE), write.metadata);
    for (const directory of [...write.directories].reverse()) await io.syncDirectory(join(staging, directory));
    await io.syncDirectory(staging);
  } catch (error) {
    await io.rm(staging).catch(() => undefined);
    await removeCreated(io, created);
    throw error;
  }
  let movedAside = false;
  try {
    if (found) {
      await io.rename(target, backup);
      movedAside = true;
    }
    await io.rename(staging, target);
    await io.syncDirectory(roleDirectory);
  } catch (error) {
    const restoreFailure = await restore(io, { target, staging, backup, movedAside });
    if (restoreFailure) {
      const artifacts = movedAside ? { staging, backup } : { staging };
      throw new KeelError("io_failed", `installing skill "${name}" failed and the previous state could not be restored: ${String(restoreFailure)}; kept ${Object.values(artifacts).join(" and ")}`, {
        details: { target, restored: false, ...artifacts, cause: String(error) },
        cause: error,
        retryable: false,
      });
    }
    await removeCreated(io, created);
    throw error;
  }
  const leftovers: string[] = [];
  if (movedAside) {
    try {
      await io.rm(backup);
    } catch {
      leftovers.push(backup);
    }
  }
  return { target, replaced: movedAside, leftovers };
}

/** Puts the previous version back after a failed swap; the error when that fails. */
async function restore(io: SkillIo, paths: { target: string; staging: string; backup: string; movedAside: boolean }): Promise<unknown> {
  try {
    if (paths.movedAside) {
      // The staging may already be at the target (the fsync after the rename failed): move it back first.
      if ((await exists(io, paths.target)) !== false) await io.rename(paths.target, paths.staging);
      await io.rename(paths.backup, paths.target);
    } else if ((await exists(io, paths.target)) !== false && (await exists(io, paths.staging)) === false) {
      await io.rename(paths.target, paths.staging);
    }
    await io.rm(paths.staging);
    return undefined;
  } catch (error) {
    return error;
  }
}
