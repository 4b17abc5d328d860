import { readdirSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, sep } from "node:path";
import { isSafeName } from "@keel/core";
import type { SkillDiagnostic, SkillDiagnosticCode, SkillDiscoveryMode, SkillScanStats } from "../skill-view.js";
import {
  type CachedSkill,
  hasSignature,
  isSettled,
  type ListedEntry,
  lstatOrUndefined,
  type ScanCache,
  type ScannedSkill,
  signatureOf,
  statOrUndefined,
} from "./scan-cache.js";
import { OPEN_DETECTS_SYMLINKS, readSkillFile } from "./skill-file.js";
import { parseVersionName } from "./skill-version.js";

/** The limits the scanner applies (all required here; defaults live in the library). */
export interface ScanLimits {
  maxFileBytes: number;
  maxFrontmatterBytes: number;
  maxSkillsPerRoot: number;
  maxDirectoriesPerRoot: number;
  maxDepth: number;
  maxRolesPerLayer: number;
}

/** One role directory of a layer, scanned. */
export interface ScannedRoot {
  role: string;
  path: string;
  skills: ScannedSkill[];
  diagnostics: SkillDiagnostic[];
}

/** One layer, scanned: its role directories sorted by role name. */
export interface ScannedLayer {
  name: string;
  path: string | null;
  roots: ScannedRoot[];
  diagnostics: SkillDiagnostic[];
}

/** The whole tree, scanned. Independent of the role a view is built for. */
export interface ScanResult {
  layers: ScannedLayer[];
  stats: SkillScanStats;
}

/** Inputs of one scan. */
export interface ScanInput {
  layers: readonly { name: string; dir: string }[];
  mode: SkillDiscoveryMode;
  limits: ScanLimits;
  /** The cache of the previous scan (read only). */
  previous: ScanCache;
  /** Milliseconds since the epoch, on the clock of the filesystem. */
  now: () => number;
}

const SKILL_FILE = "SKILL.md";
const SKILL_FILE_LOWERCASE = "skill.md";

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as { code?: string }).code : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `directory/name` without `path.join`'s normalisation (names from `readdir` need none). */
function childPath(directory: string, name: string): string {
  return directory.endsWith(sep) ? directory + name : directory + sep + name;
}

/** True when `path` is `root` or inside it (both real paths). */
export function isInside(root: string, path: string): boolean {
  if (path === root) return true;
  return path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function isIgnored(name: string): boolean {
  return name.startsWith(".") || name === "node_modules";
}

/** Lists a directory: entries the walk cares about, sorted by name (code unit order). */
function listDirectory(directory: string): ListedEntry[] {
  const listed: ListedEntry[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (isIgnored(entry.name)) continue;
    const kind = entry.isDirectory() ? "directory" : entry.isSymbolicLink() ? "symlink" : "other";
    listed.push({ name: entry.name, path: childPath(directory, entry.name), kind, skill: undefined });
  }
  return listed.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
}

type LinkTarget = { real: string; isDirectory: boolean } | { diagnostic: SkillDiagnosticCode; message: string; target?: string };

/** Follows a symlink, but only to a place inside `layerRoot`. */
function followLink(path: string, layerRoot: string): LinkTarget {
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ELOOP") return { diagnostic: "symlink_loop", message: "the symlink resolves to itself: remove it" };
    return { diagnostic: "broken_symlink", message: `the symlink cannot be followed (${code ?? errorMessage(error)}): fix or remove it` };
  }
  if (!isInside(layerRoot, real)) {
    return { diagnostic: "symlink_escape", message: `the symlink leaves its layer root ${layerRoot}: it is not followed`, target: real };
  }
  try {
    return { real, isDirectory: statSync(real).isDirectory() };
  } catch (error) {
    return { diagnostic: "broken_symlink", message: `the symlink target cannot be read: ${errorMessage(error)}`, target: real };
  }
}

/**
 * The stable path of a managed skill reached through a link: when `real` is a version directory
 * `<dir>/.<name>@…` that `<dir>/<name>` links to, `<dir>/<name>` (the path that stays valid
 * across replacements); else `undefined`. The link being followed is usually that very link.
 */
function managedPath(linkPath: string, real: string): string | undefined {
  const version = parseVersionName(basename(real));
  if (!version) return undefined;
  const stable = childPath(dirname(real), version.name);
  if (stable === linkPath) return stable;
  try {
    return readlinkSync(stable) === basename(real) ? stable : undefined;
  } catch {
    return undefined;
  }
}

/** What the walkers of one scan share. */
interface ScanState {
  input: ScanInput;
  next: ScanCache;
  stats: SkillScanStats;
}

/** The scan of one role directory. */
class RootWalker {
  readonly root: ScannedRoot;
  private skillCount = 0;
  private directoryCount = 0;
  private stopped = false;

  constructor(
    private readonly state: ScanState,
    private readonly layer: string,
    private readonly layerRoot: string,
    role: string,
    rootPath: string,
  ) {
    this.root = { role, path: rootPath, skills: [], diagnostics: [] };
  }

  walk(): ScannedRoot {
    this.walkDirectory(this.root.path, "", 0, new Set([this.root.path]));
    return this.root;
  }

  private get limits(): ScanLimits {
    return this.state.input.limits;
  }

  private diagnose(severity: SkillDiagnostic["severity"], code: SkillDiagnosticCode, path: string, message: string, target?: string): void {
    const diagnostic: SkillDiagnostic = { severity, code, message, path, layer: this.layer, role: this.root.role };
    if (target !== undefined) diagnostic.target = target;
    this.root.diagnostics.push(diagnostic);
  }

  /** The directory's entries: from the cache while the directory is unchanged, else listed. */
  private list(directory: string): readonly ListedEntry[] | undefined {
    if (++this.directoryCount > this.limits.maxDirectoriesPerRoot) {
      this.stopped = true;
      this.diagnose("warning", "directory_limit", this.root.path, `more than ${this.limits.maxDirectoriesPerRoot} directories under this root: the rest is not searched`);
      return undefined;
    }
    const { previous, now } = this.state.input;
    const stat = statOrUndefined(directory);
    const cached = previous.listings.get(directory);
    if (cached && stat && hasSignature(stat, cached.signature)) {
      this.state.next.listings.set(directory, cached);
      return cached.entries;
    }
    try {
      const startedAt = now();
      const entries = listDirectory(directory);
      this.state.stats.directories++;
      // The signature was taken before the listing: a change in between shows up next time.
      if (stat && isSettled(signatureOf(stat), startedAt)) this.state.next.listings.set(directory, { signature: signatureOf(stat), entries });
      return entries;
    } catch (error) {
      this.diagnose("error", "unreadable", directory, `the directory cannot be listed: ${errorMessage(error)}`);
      return undefined;
    }
  }

  private walkDirectory(directory: string, relative: string, depth: number, ancestors: Set<string>): void {
    const entries = this.list(directory);
    if (!entries) return;
    for (const entry of entries) {
      if (this.stopped) return;
      const path = entry.path;
      const childRelative = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.kind === "directory") {
        this.visit(path, childRelative, depth + 1, ancestors, entry);
      } else if (entry.kind === "symlink") {
        const target = followLink(path, this.layerRoot);
        if ("diagnostic" in target) {
          this.diagnose("warning", target.diagnostic, path, target.message, target.target);
        } else if (target.isDirectory && ancestors.has(target.real)) {
          this.diagnose("warning", "symlink_loop", path, "the symlink points back to a directory it is inside: it is not followed", target.real);
        } else if (target.isDirectory) {
          // A managed skill is read through its link, which a replacement swaps atomically.
          this.visit(managedPath(path, target.real) ?? target.real, childRelative, depth + 1, ancestors);
        }
      }
    }
  }

  /** A directory that may be a skill (it holds a SKILL.md) or may hold skills deeper down. */
  private visit(directory: string, relative: string, depth: number, ancestors: Set<string>, entry?: ListedEntry): void {
    if (this.trySkill(directory, relative, entry)) return;
    if (depth >= this.limits.maxDepth) {
      const entries = this.list(directory);
      if (entries?.some((entry) => entry.kind !== "other")) {
        this.diagnose("warning", "depth_exceeded", directory, `directories deeper than ${this.limits.maxDepth} levels below the root are not searched`);
      }
      return;
    }
    ancestors.add(directory);
    this.walkDirectory(directory, relative, depth, ancestors);
    ancestors.delete(directory);
  }

  /**
   * Takes the directory as a skill when it holds a SKILL.md (or skill.md); true if it does.
   * `entry` is the directory's entry in its parent's listing, which remembers the skill found.
   */
  private trySkill(directory: string, relative: string, entry?: ListedEntry): boolean {
    const cached = entry?.skill ?? this.state.input.previous.skills.get(directory);
    if (cached && this.isUnchanged(cached, directory)) {
      if (entry) entry.skill = cached;
      this.state.next.skills.set(directory, cached);
      this.state.stats.cacheHits++;
      return this.accept(directory, relative, cached.filePath, cached);
    }
    if (entry) entry.skill = undefined;
    const directoryName = basename(directory);
    for (const fileName of [SKILL_FILE, SKILL_FILE_LOWERCASE]) {
      const path = childPath(directory, fileName);
      if (!OPEN_DETECTS_SYMLINKS && lstatOrUndefined(path)?.isSymbolicLink()) return this.trySkillLink(path, relative);
      const startedAt = this.state.input.now();
      const read = readSkillFile(path, directoryName, this.state.input.mode, this.limits);
      if (read.kind === "absent") continue;
      if (read.kind === "symlink") return this.trySkillLink(path, relative);
      if (read.kind === "unreadable") {
        this.diagnose("error", "unreadable", path, `the file cannot be read: ${read.message}`);
        return true;
      }
      if (read.kind === "not_a_file") {
        this.diagnose("error", "unreadable", path, `${fileName} is not a regular file: make it a file`);
        return true;
      }
      const judged: CachedSkill = { filePath: path, lowercase: fileName !== SKILL_FILE, signature: read.signature, fields: read.fields, issues: read.issues };
      if (isSettled(read.signature, startedAt)) {
        this.state.next.skills.set(directory, judged);
        if (entry) entry.skill = judged;
      }
      return this.accept(directory, relative, path, judged);
    }
    return false;
  }

  private isUnchanged(cached: CachedSkill, directory: string): boolean {
    if (cached.lowercase && lstatOrUndefined(childPath(directory, SKILL_FILE))) return false;
    const stat = lstatOrUndefined(cached.filePath);
    return stat !== undefined && stat.isFile() && hasSignature(stat, cached.signature);
  }

  /** A SKILL.md that is a symlink: followed only inside the layer root, never cached. */
  private trySkillLink(path: string, relative: string): boolean {
    const target = followLink(path, this.layerRoot);
    if ("diagnostic" in target) {
      this.diagnose("warning", target.diagnostic, path, target.message, target.target);
      return true;
    }
    if (target.isDirectory) return false;
    const read = readSkillFile(target.real, basename(dirname(target.real)), this.state.input.mode, this.limits);
    if (read.kind !== "read") {
      const reason = read.kind === "unreadable" ? `: ${read.message}` : read.kind === "not_a_file" ? ": it is not a regular file" : "";
      this.diagnose("error", "unreadable", path, `the linked file cannot be read${reason}`, target.real);
      return true;
    }
    const judged: CachedSkill = { filePath: target.real, lowercase: false, signature: read.signature, fields: read.fields, issues: read.issues };
    return this.accept(dirname(target.real), relative, target.real, judged);
  }

  private accept(directory: string, relative: string, path: string, judged: CachedSkill): boolean {
    if (this.skillCount >= this.limits.maxSkillsPerRoot) {
      this.stopped = true;
      this.diagnose("warning", "skill_limit", this.root.path, `more than ${this.limits.maxSkillsPerRoot} skills under this root: the rest is not loaded`);
      return true;
    }
    this.skillCount++;
    this.state.stats.skillFiles++;
    for (const issue of judged.issues) this.diagnose(issue.severity, issue.code, path, issue.message);
    if (judged.fields) {
      let scanned = judged.scanned;
      if (scanned?.path !== path || scanned.relativePath !== relative || scanned.directory !== directory) {
        scanned = { fields: judged.fields, path, directory, relativePath: relative, bytes: judged.signature.size };
        judged.scanned = scanned;
      }
      this.root.skills.push(scanned);
    }
    return true;
  }
}

function layerDiagnostic(layer: string, severity: SkillDiagnostic["severity"], code: SkillDiagnosticCode, path: string, message: string, target?: string): SkillDiagnostic {
  return target === undefined ? { severity, code, message, path, layer, role: null } : { severity, code, message, path, layer, role: null, target };
}

interface FoundRoles {
  path: string | null;
  roles: { role: string; path: string }[];
  diagnostics: SkillDiagnostic[];
}

/** Finds the role directories of one layer (sorted by role name). */
function findRoles(layer: { name: string; dir: string }, limits: ScanLimits, stats: SkillScanStats): FoundRoles {
  const diagnostics: SkillDiagnostic[] = [];
  let real: string;
  try {
    real = realpathSync.native(layer.dir);
    if (!statSync(real).isDirectory()) {
      diagnostics.push(layerDiagnostic(layer.name, "error", "not_a_directory", layer.dir, "the layer path is not a directory"));
      return { path: null, roles: [], diagnostics };
    }
  } catch (error) {
    if (errorCode(error) !== "ENOENT") {
      diagnostics.push(layerDiagnostic(layer.name, "error", "unreadable", layer.dir, `the layer directory cannot be read: ${errorMessage(error)}`));
    }
    return { path: null, roles: [], diagnostics };
  }
  let entries: ListedEntry[];
  try {
    entries = listDirectory(real);
    stats.directories++;
  } catch (error) {
    diagnostics.push(layerDiagnostic(layer.name, "error", "unreadable", real, `the layer directory cannot be listed: ${errorMessage(error)}`));
    return { path: real, roles: [], diagnostics };
  }
  const roles: { role: string; path: string }[] = [];
  for (const entry of entries) {
    const path = childPath(real, entry.name);
    let rolePath = path;
    if (entry.kind === "symlink") {
      const target = followLink(path, real);
      if ("diagnostic" in target) {
        diagnostics.push(layerDiagnostic(layer.name, "warning", target.diagnostic, path, target.message, target.target));
        continue;
      }
      if (!target.isDirectory) continue;
      rolePath = target.real;
    } else if (entry.kind !== "directory") {
      continue;
    }
    if (!isSafeName(entry.name)) {
      diagnostics.push(layerDiagnostic(layer.name, "warning", "invalid_role_name", path, `"${entry.name}" is not a safe role name (letters, digits, '.', '_' or '-'): its skills are not used`));
      continue;
    }
    if (roles.length >= limits.maxRolesPerLayer) {
      diagnostics.push(layerDiagnostic(layer.name, "warning", "role_limit", real, `more than ${limits.maxRolesPerLayer} role directories: the rest are not used`));
      break;
    }
    roles.push({ role: entry.name, path: rolePath });
  }
  return { path: real, roles, diagnostics };
}

/** Work between two yields to the event loop: long scans never block it for much longer. */
const SLICE_MS = 10;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Scans every layer and role directory. Synchronous file calls, one role directory at a time,
 * yielding to the event loop between role directories once ~10 ms of work has passed. Never throws for a bad file or directory: each
 * becomes a diagnostic. Returns the result and the cache for the next scan (unchanged files and
 * directories only; what is no longer on disk is dropped).
 */
export async function scanLayers(input: ScanInput): Promise<{ result: ScanResult; cache: ScanCache }> {
  const state: ScanState = { input, next: { skills: new Map(), listings: new Map() }, stats: { skillFiles: 0, cacheHits: 0, directories: 0 } };
  const layers: ScannedLayer[] = [];
  let sliceStart = performance.now();
  for (const layer of input.layers) {
    const found = findRoles(layer, input.limits, state.stats);
    const scanned: ScannedLayer = { name: layer.name, path: found.path, roots: [], diagnostics: found.diagnostics };
    for (const { role, path } of found.roles) {
      if (performance.now() - sliceStart >= SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
      scanned.roots.push(new RootWalker(state, layer.name, found.path ?? path, role, path).walk());
    }
    layers.push(scanned);
  }
  return { result: { layers, stats: state.stats }, cache: state.next };
}
