import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { errnoOf, type SkillIo } from "../skill-io.js";

/**
 * The layout of a managed skill (see docs/skills.md, "Layout of a managed skill"):
 *
 * ```
 * <layer>/<role>/<name>                 → .<name>@<installedAt>-<tag>   (a relative symlink)
 * <layer>/<role>/.<name>@<installedAt>-<tag>/SKILL.md …                (one directory per version)
 * ```
 *
 * A replacement writes a new version directory, then renames a new link over `<name>`: one
 * `rename(2)`, atomic on POSIX, so a reader finds the old version or the new one and never
 * nothing. Keel never changes a version directory once linked. Versions no longer linked stay
 * where they are for a grace period counted from the install of the version that replaced them (a
 * reader that resolved the link just before the swap keeps a valid path), then the next managed
 * operation on the role removes them. Discovery ignores dot names, so it sees only the link.
 */

/** The parts of a version directory's name. */
export interface VersionName {
  /** The skill's name. */
  name: string;
  /** When the version was installed (ms since the epoch, the managing clock). */
  installedAt: number;
  /** Random, to keep two versions installed in one millisecond apart. */
  tag: string;
}

const VERSION = /^\.([a-z0-9][a-z0-9-]{0,127})@(\d{1,16})-([0-9a-f]{8})$/;
/** Names of an interrupted operation's pieces: `.keel-<what>.<skill name>.<id>`. */
const INTERRUPTED = /^\.keel-(staging|link|withdrawing|backup)\.([a-z0-9][a-z0-9-]{0,127})\.([0-9A-Za-z]+)$/;

/** The directory name of a version of `name` installed at `installedAt`. */
export function versionName(name: string, installedAt: number): string {
  return `.${name}@${Math.max(0, Math.floor(installedAt))}-${randomBytes(4).toString("hex")}`;
}

/** The parts of a version directory's name, or `undefined` when `entry` is not one. */
export function parseVersionName(entry: string): VersionName | undefined {
  const match = VERSION.exec(entry);
  if (!match) return undefined;
  return { name: match[1]!, installedAt: Number(match[2]), tag: match[3]! };
}

/** What is installed under a skill's name in a role directory. */
export type InstalledSkill =
  | { kind: "absent" }
  /** A plain directory: the layout before versions (migrated by the next managed update). */
  | { kind: "directory" }
  /** A managed link to an existing version directory (its name in the role directory). */
  | { kind: "managed"; version: string }
  /** A file, or a link that is not a managed skill's. */
  | { kind: "other" };

async function lstatKind(io: SkillIo, path: string): Promise<"directory" | "symlink" | "other" | "absent"> {
  try {
    const stat = await io.lstat(path);
    return stat.isDirectory() ? "directory" : stat.isSymbolicLink() ? "symlink" : "other";
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return "absent";
    throw error;
  }
}

/** Looks at `<roleDirectory>/<name>` without following anything but a managed link. */
export async function inspectInstalled(io: SkillIo, roleDirectory: string, name: string): Promise<InstalledSkill> {
  const path = join(roleDirectory, name);
  const kind = await lstatKind(io, path);
  if (kind === "absent" || kind === "directory") return { kind };
  if (kind === "other") return { kind: "other" };
  const target = await io.readlink(path);
  if (parseVersionName(target)?.name !== name) return { kind: "other" };
  return (await lstatKind(io, join(roleDirectory, target))) === "directory" ? { kind: "managed", version: target } : { kind: "other" };
}

/** True when `<roleDirectory>/<name>` is a skill: a managed link or a plain directory. */
export async function isInstalled(io: SkillIo, roleDirectory: string, name: string): Promise<boolean> {
  const installed = await inspectInstalled(io, roleDirectory, name);
  return installed.kind === "managed" || installed.kind === "directory";
}

/** Options of {@link sweepRoleDirectory}. */
export interface SweepOptions {
  /** Now, on the managing clock. */
  now: number;
  /** How long a version no longer linked is kept (see the module comment). */
  graceMs: number;
}

async function removeQuietly(io: SkillIo, path: string, kept: string[]): Promise<void> {
  try {
    await io.rm(path);
  } catch {
    kept.push(path);
  }
}

/**
 * Finishes or undoes what an interrupted operation (a crash, a power cut) left in a role
 * directory, then removes versions past their grace. The caller holds the role's lock, so no
 * operation is in flight. Best effort: what cannot be removed is returned, and tried again next
 * time.
 *
 * - `.keel-staging.*`: a tree never linked: removed.
 * - `.keel-link.<name>.*` (a new link not yet renamed into place): renamed into place when
 *   `<name>` is absent and its version exists (the swap of a plain-directory skill was cut between
 *   its two renames: roll forward to the complete, fsynced version), else removed.
 * - `.keel-withdrawing.<name>.*`: a withdrawal cut before its version reached the trash: renamed
 *   back to `<name>` when absent and the version is still here, else removed.
 * - `.keel-backup.<name>.*` (the swap before versions): renamed back when `<name>` is absent, else removed.
 * - versions of `<name>` other than the linked one: removed once `graceMs` has passed since the
 *   next version (in install order) was installed, which is when the link stopped leading to
 *   them; the newest version when it is not linked (a crash before its link, a withdrawal's
 *   leftovers), since its own install.
 */
export async function sweepRoleDirectory(io: SkillIo, roleDirectory: string, options: SweepOptions): Promise<string[]> {
  const kept: string[] = [];
  let entries: string[];
  try {
    entries = await io.readdir(roleDirectory);
  } catch {
    return kept;
  }
  const present = new Set(entries);
  let renamed = false;
  for (const entry of entries.sort()) {
    const match = INTERRUPTED.exec(entry);
    if (!match) continue;
    const [, what, name] = match as unknown as [string, string, string];
    const path = join(roleDirectory, entry);
    try {
      let restore = false;
      if (!present.has(name)) {
        if (what === "backup") restore = true;
        else if (what === "link" || what === "withdrawing") {
          const target = await io.readlink(path).catch(() => "");
          restore = parseVersionName(target)?.name === name && (await lstatKind(io, join(roleDirectory, target))) === "directory";
        }
      }
      if (restore) {
        await io.rename(path, join(roleDirectory, name));
        present.add(name);
        renamed = true;
      } else if (what === "link" || what === "withdrawing") {
        await io.unlink(path);
      } else {
        await io.rm(path);
      }
    } catch {
      kept.push(path);
    }
  }
  if (renamed) await io.syncDirectory(roleDirectory).catch(() => undefined);
  const versions = new Map<string, (VersionName & { entry: string })[]>();
  for (const entry of renamed ? await io.readdir(roleDirectory).catch(() => entries) : entries) {
    const version = parseVersionName(entry);
    if (!version) continue;
    const list = versions.get(version.name) ?? [];
    list.push({ ...version, entry });
    versions.set(version.name, list);
  }
  for (const [name, list] of versions) {
    const installed = await inspectInstalled(io, roleDirectory, name).catch((): InstalledSkill => ({ kind: "other" }));
    const current = installed.kind === "managed" ? installed.version : undefined;
    list.sort((left, right) => left.installedAt - right.installedAt || (left.tag < right.tag ? -1 : left.tag > right.tag ? 1 : 0));
    for (const [index, version] of list.entries()) {
      if (version.entry === current) continue;
      // Replaced when the next version was installed (a version never linked: when it was written).
      const retiredAt = list[index + 1]?.installedAt ?? version.installedAt;
      if (options.now - retiredAt >= options.graceMs) await removeQuietly(io, join(roleDirectory, version.entry), kept);
    }
  }
  return kept;
}
