import { basename, dirname, join } from "node:path";
import { KeelError, newId } from "@keel/core";
import { errnoOf, type SkillIo } from "../skill-io.js";
import { listSkillTree, METADATA_FILE, readAndDigest, type SkillTreeLimits } from "./skill-tree.js";
import { inspectInstalled, type InstalledSkill, versionName } from "./skill-version.js";

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
  /** The install time recorded in the version's name (the managing clock). */
  installedAt: number;
}

/** The outcome of {@link writeSkill}. */
export interface SkillWriteResult {
  target: string;
  replaced: boolean;
}

async function exists(io: SkillIo, path: string): Promise<boolean> {
  try {
    await io.lstat(path);
    return true;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
    throw error;
  }
}

/**
 * Creates `directory` and any missing ancestors, durably (each parent fsynced after its new
 * entry); returns those created, outermost first.
 */
export async function makeDirectories(io: SkillIo, directory: string): Promise<string[]> {
  const missing: string[] = [];
  let current = directory;
  while (!(await exists(io, current))) {
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
    await io.syncDirectory(dirname(path));
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

/**
 * The digest of the skill installed as `<roleDirectory>/<name>` (metadata excluded), through a
 * managed link or in a plain directory; `null` when nothing (or a file, or a foreign link) is there.
 */
export async function digestOfInstalled(io: SkillIo, roleDirectory: string, name: string, limits: SkillTreeLimits): Promise<string | null> {
  const installed = await inspectInstalled(io, roleDirectory, name);
  if (installed.kind !== "directory" && installed.kind !== "managed") return null;
  const listing = await listSkillTree(io, join(roleDirectory, name), limits);
  if (listing.problems.length > 0) return `unreadable:${listing.problems.length}`;
  return (await readAndDigest(io, listing)).digest;
}

/** Writes the tree and its metadata into `staging`, every file and directory fsynced. */
async function stage(write: SkillWrite, staging: string): Promise<void> {
  const { io } = write;
  await io.mkdir(staging);
  for (const directory of write.directories) await io.mkdir(join(staging, directory));
  for (const file of write.files) await io.writeFile(join(staging, file.diskRelative), file.bytes);
  if (write.metadata) await io.writeFile(join(staging, METADATA_FILE), write.metadata);
  for (const directory of [...write.directories].reverse()) await io.syncDirectory(join(staging, directory));
  await io.syncDirectory(staging);
}

/** The paths of one swap and the steps done so far (what {@link undoSwap} must reverse). */
interface Swap {
  io: SkillIo;
  roleDirectory: string;
  target: string;
  installed: InstalledSkill;
  staging: string;
  version: string;
  /** The new link, under a temporary name until it is renamed over the target. */
  link: string;
  /** Where a plain-directory skill (the layout before versions) goes: a retired version. */
  retired: string | undefined;
  done: Set<"version" | "link" | "retired" | "swapped">;
}

/**
 * Installs a skill tree as `<roleDirectory>/<name>` atomically and durably. The caller holds the
 * role's lock.
 *
 * Steps: check the target (and `expect`) → stage the tree and its metadata in
 * `.keel-staging.<name>.<id>` (every file and directory fsynced) → rename it to its version name
 * `.<name>@<installedAt>-<tag>` → create the new link `.keel-link.<name>.<id>` → fsync the role
 * directory (the version and the link are durable before anything points at them) → rename the
 * link over `<name>` (the one atomic step readers can see) → fsync the role directory. The
 * previous version stays where it is, for the grace period (`sweepRoleDirectory`).
 *
 * A plain-directory skill (the layout before versions) is migrated: it is renamed to a retired
 * version name just before the link is renamed in, the one replacement with a gap (of one rename):
 * POSIX cannot rename a link over a directory.
 *
 * On a failure every step done is undone and the role directory is as it was (directories created
 * for the import removed). When the undo itself fails, nothing is deleted: the error
 * (`io_failed`, `details.restored: false`) names what was kept.
 */
export async function writeSkill(write: SkillWrite): Promise<SkillWriteResult> {
  const { io, roleDirectory, name } = write;
  const target = join(roleDirectory, name);
  const installed = await inspectInstalled(io, roleDirectory, name);
  if (installed.kind === "other") {
    throw new KeelError("conflict", `${target} exists and is neither a skill directory nor a managed skill's link (a file or another link): remove it first`, {
      details: { target },
      retryable: false,
    });
  }
  if (write.expect) {
    const current = await digestOfInstalled(io, roleDirectory, name, write.limits);
    const expected = "absent" in write.expect ? null : write.expect.digest;
    if (current !== expected) {
      throw new KeelError("conflict", `skill "${name}" changed since the plan was made (expected ${expected ?? "nothing"}, found ${current ?? "nothing"}): plan again`, {
        details: { target, expected, found: current },
        retryable: false,
      });
    }
  } else if (installed.kind !== "absent" && !write.overwrite) {
    throw new KeelError("conflict", `skill "${name}" already exists at ${target}: pass overwrite to replace it`, { details: { target }, retryable: false });
  }
  const created = await makeDirectories(io, roleDirectory);
  const id = newId();
  const staging = join(roleDirectory, `.keel-staging.${name}.${id}`);
  try {
    await stage(write, staging);
  } catch (error) {
    await io.rm(staging).catch(() => undefined);
    await removeCreated(io, created);
    throw error;
  }
  const swap: Swap = {
    io,
    roleDirectory,
    target,
    installed,
    staging,
    version: join(roleDirectory, versionName(name, write.installedAt)),
    link: join(roleDirectory, `.keel-link.${name}.${id}`),
    retired: installed.kind === "directory" ? join(roleDirectory, versionName(name, write.installedAt - 1)) : undefined,
    done: new Set(),
  };
  try {
    await swapIn(swap);
  } catch (error) {
    const undoFailure = await undoSwap(swap);
    if (undoFailure) {
      const kept: Record<string, string> = swap.done.has("version") ? { version: swap.version } : { staging: swap.staging };
      if (swap.done.has("retired") && swap.retired) kept.retired = swap.retired;
      throw new KeelError("io_failed", `installing skill "${name}" failed and the previous state could not be restored: ${String(undoFailure)}; kept ${Object.values(kept).join(" and ")}`, {
        details: { target, restored: false, ...kept, cause: String(error) },
        cause: error,
        retryable: false,
      });
    }
    await removeCreated(io, created);
    throw error;
  }
  return { target, replaced: installed.kind !== "absent" };
}

async function swapIn(swap: Swap): Promise<void> {
  const { io, done } = swap;
  await io.rename(swap.staging, swap.version);
  done.add("version");
  await io.symlink(basename(swap.version), swap.link);
  done.add("link");
  await io.syncDirectory(swap.roleDirectory);
  if (swap.retired) {
    await io.rename(swap.target, swap.retired);
    done.add("retired");
  }
  await io.rename(swap.link, swap.target);
  done.add("swapped");
  await io.syncDirectory(swap.roleDirectory);
}

/** Reverses the steps of a failed swap; the error when that fails. */
async function undoSwap(swap: Swap): Promise<unknown> {
  const { io, done, installed } = swap;
  try {
    if (done.has("swapped")) {
      if (installed.kind === "managed") {
        await io.symlink(installed.version, swap.link);
        await io.rename(swap.link, swap.target);
      } else {
        await io.unlink(swap.target);
      }
    } else if (done.has("link")) {
      await io.unlink(swap.link);
    }
    if (done.has("retired")) await io.rename(swap.retired!, swap.target);
    await io.rm(done.has("version") ? swap.version : swap.staging);
  } catch (error) {
    return error;
  }
  await io.syncDirectory(swap.roleDirectory).catch(() => undefined);
  return undefined;
}
