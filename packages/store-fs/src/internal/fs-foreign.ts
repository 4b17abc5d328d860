import { randomBytes } from "node:crypto";
import type { Dirent, Stats } from "node:fs";
import path from "node:path";
import { KeelError } from "@keel/core";
import { LOCK_INIT_PREFIX } from "@keel/store/kit";
import { quarantineDirectory, quarantineFiles } from "./doc-quarantine.js";
import type { FsContext } from "./fs-context.js";
import { isErrno } from "./fs-io.js";

/**
 * Foreign entries: a symbolic link, a FIFO, a device or a socket where the store keeps its own
 * files and directories. The store never follows or opens one (fs-contain.ts); `check()` finds
 * them without following them either (directory listings with entry types, `lstat`), reports
 * each, and with `repair` moves it into quarantine by one rename of the entry itself.
 *
 * Entries whose name is a lock's or a lease's state are only ever renamed by the store, never
 * opened, so a link there reaches nothing outside. A lock entry that is free or stale is moved
 * aside all the same (a compare-and-swap: the rename fails if a process took the lock
 * meanwhile) and its lock directory rebuilt; a lease entry, whose name is the lease's state, is
 * reported and left in place (moving it would forget the lease's token).
 */

/** What the store found in place of its own file or directory. */
export interface ForeignEntry {
  location: string;
  /** `a symbolic link`, `a FIFO`, … */
  what: string;
  /** `quarantine`: moved aside by a repair; `lock-entry`: moved aside when the lock is free or stale; `report`: reported only. */
  repair: "quarantine" | "lock-entry" | "report";
}

/** What a directory entry is when it is not a regular file or a directory, else `undefined`. */
export function foreignKind(entry: Dirent | Stats): string | undefined {
  if (entry.isSymbolicLink()) return "a symbolic link";
  if (entry.isFIFO()) return "a FIFO";
  if (entry.isCharacterDevice() || entry.isBlockDevice()) return "a device";
  if (entry.isSocket()) return "a socket";
  return undefined;
}

function lstatOrUndefined(context: FsContext, location: string): Stats | undefined {
  try {
    return context.io.lstatSync(location);
  } catch (error) {
    if (isErrno(error, "ENOENT", "ENOTDIR")) return undefined;
    throw error;
  }
}

function entriesOf(context: FsContext, directory: string): Dirent[] {
  try {
    return context.io.readdirSync(directory);
  } catch (error) {
    if (isErrno(error, "ENOENT", "ENOTDIR")) return [];
    throw error;
  }
}

/** The directories under `_keel/` whose entries are the store's own (each looked into one level; lock and lease directories two). */
const INTERNAL_DIRECTORIES = new Set(["locks", "leases", "quarantine", "logidx", "lease-holders"]);

/**
 * Finds the foreign entries of the store's internal area: `_keel` itself, its files and
 * directories, the entries of those directories, and the entries of each lock and lease
 * directory. Nothing is looked into through a foreign entry.
 */
export function findInternalForeign(context: FsContext): ForeignEntry[] {
  const { internal } = context.paths;
  const top = lstatOrUndefined(context, internal);
  if (!top) return [];
  const what = foreignKind(top);
  if (what) return [{ location: internal, what, repair: "quarantine" }];
  if (!top.isDirectory()) return [];
  const found: ForeignEntry[] = [];
  for (const entry of entriesOf(context, internal)) {
    const location = path.join(internal, entry.name);
    const kind = foreignKind(entry);
    if (kind) {
      found.push({ location, what: kind, repair: "quarantine" });
      continue;
    }
    if (!entry.isDirectory() || !INTERNAL_DIRECTORIES.has(entry.name)) continue;
    for (const inner of entriesOf(context, location)) {
      const innerLocation = path.join(location, inner.name);
      const innerKind = foreignKind(inner);
      if (innerKind) {
        found.push({ location: innerLocation, what: innerKind, repair: "quarantine" });
        continue;
      }
      const stateful = entry.name === "locks" || entry.name === "leases";
      if (!stateful || !inner.isDirectory() || inner.name.startsWith(LOCK_INIT_PREFIX)) continue;
      for (const token of entriesOf(context, innerLocation)) {
        const tokenKind = foreignKind(token);
        if (tokenKind) found.push({ location: path.join(innerLocation, token.name), what: tokenKind, repair: entry.name === "locks" ? "lock-entry" : "report" });
      }
    }
  }
  return found;
}

/**
 * Moves a foreign entry into a new quarantine entry (the entry itself, never what a link points
 * at). `_keel` itself or the quarantine directory is first renamed aside in its parent (a name
 * starting with `.`, which no key can make), so that a real directory can take its place.
 * Returns the quarantine entry, or `undefined` when the entry was gone.
 */
export async function quarantineForeign(context: FsContext, entry: ForeignEntry, reason: string): Promise<string | undefined> {
  const { location } = entry;
  let source = location;
  if (location === context.paths.internal || location === quarantineDirectory(context)) {
    source = path.join(path.dirname(location), `.${path.basename(location)}.${randomBytes(6).toString("hex")}.aside`);
    try {
      context.io.renameSync(location, source);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return undefined;
      throw error;
    }
  }
  const key = path.relative(context.paths.root, location).split(path.sep);
  try {
    return await quarantineFiles(context, key, [source], reason, [path.basename(location)]);
  } catch (error) {
    // Renamed meanwhile (a lock entry taken by a process): nothing to move.
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
}

/**
 * True when a foreign lock entry may be moved aside now: its lock is free or stale (the
 * rename that moves it is then a compare-and-swap like a takeover).
 */
export function lockEntryMovable(context: FsContext, location: string): boolean {
  const seen = context.locks.inspect(path.dirname(location));
  const name = path.basename(location);
  if (seen.state === "free") return name === "free";
  return seen.state === "held" && seen.entry === name && seen.stale;
}

/** The `corrupt` refusal {@link findInternalForeign}'s callers skip: one a foreign entry explains. */
export function explainedBy(error: unknown, foreign: ReadonlySet<string>): boolean {
  if (!KeelError.is(error, "corrupt")) return false;
  const location = error.details.location;
  return typeof location === "string" && foreign.has(location);
}
