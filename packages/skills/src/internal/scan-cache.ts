import { lstatSync, type Stats, statSync } from "node:fs";
import type { FrontmatterIssue, SkillFields } from "./frontmatter-check.js";

/** What identifies one version of a file or directory on disk, for the freshness check. */
export interface FileSignature {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** A usable skill as found on disk, before a view gives it an ownership. */
export interface ScannedSkill {
  fields: SkillFields;
  path: string;
  directory: string;
  relativePath: string;
  bytes: number;
}

/** A judged SKILL.md, kept between scans while its file signature does not change. */
export interface CachedSkill {
  /** Path of the SKILL.md (or skill.md) that was read. */
  filePath: string;
  /** True when the file is the lowercase `skill.md` (a `SKILL.md` appearing later wins). */
  lowercase: boolean;
  signature: FileSignature;
  fields: SkillFields | null;
  issues: FrontmatterIssue[];
  /** The last scanned form, reused while it is found at the same place (cheap unchanged scans). */
  scanned?: ScannedSkill;
}

/** One directory entry that the walk cares about. */
export interface ListedEntry {
  name: string;
  /** The entry's path (its directory's path + the name). */
  path: string;
  kind: "directory" | "symlink" | "other";
  /**
   * The judged SKILL.md last found in this (directory) entry: a cached listing thus leads
   * straight to its skills without a lookup. Still checked against the file's signature.
   */
  skill: CachedSkill | undefined;
}

/** A directory listing, kept while the directory's signature does not change. */
export interface CachedListing {
  signature: FileSignature;
  entries: readonly ListedEntry[];
}

/**
 * What one scan learnt, for the next: skill directory → judged SKILL.md, and directory →
 * listing. Only entries that were still on disk and unchanged are carried over.
 */
export interface ScanCache {
  skills: Map<string, CachedSkill>;
  listings: Map<string, CachedListing>;
}

/** An empty cache. */
export function createScanCache(): ScanCache {
  return { skills: new Map(), listings: new Map() };
}

/**
 * Files changed this recently may change again within the same timestamp tick (filesystem
 * timestamps can be as coarse as 2 s), so a same-size edit could keep the same signature: such
 * files and directories are not cached and are read again on the next scan.
 */
export const RACY_WINDOW_MS = 2000;

/** The signature of a stat result. */
export function signatureOf(stat: { ino: number; size: number; mtimeMs: number; ctimeMs: number }): FileSignature {
  return { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs };
}

/** True when the stat result has the signature (same inode, size, mtime and ctime). */
export function hasSignature(stat: Stats, signature: FileSignature): boolean {
  return stat.ino === signature.ino && stat.size === signature.size && stat.mtimeMs === signature.mtimeMs && stat.ctimeMs === signature.ctimeMs;
}

/** True when a version of a file read at `startedAt` may be cached (it is not too recent). */
export function isSettled(signature: FileSignature, startedAt: number): boolean {
  return Math.max(signature.mtimeMs, signature.ctimeMs) < startedAt - RACY_WINDOW_MS;
}

const STAT_OPTIONS = Object.freeze({ bigint: false, throwIfNoEntry: false } as const);

/** `lstat` that answers `undefined` for a path that is gone or cannot be read. */
export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path, STAT_OPTIONS);
  } catch {
    return undefined;
  }
}

/** `stat` that answers `undefined` for a path that is gone or cannot be read. */
export function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, STAT_OPTIONS);
  } catch {
    return undefined;
  }
}
