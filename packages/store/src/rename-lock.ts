import { createHash, randomBytes } from "node:crypto";
import { hostname as osHostname } from "node:os";
import path from "node:path";
import type { KeelError } from "@keel/core";

/**
 * Cross-process locks as rename tokens: the one implementation behind the filesystem store's
 * locks (`@keel/store-fs`) and the skills' managed layer (`@keel/skills`). A lock is a small
 * directory holding exactly one entry: `free`, or `held.<pid>.<host tag>.<startedAt>.<token>`
 * naming its holder.
 *
 * - Acquire: `rename(free → held.<me>)`. Rename is atomic: of several processes exactly one
 *   succeeds, the others get `ENOENT`.
 * - Release: `rename(held.<me> → free)`. If the lock was taken over meanwhile, our entry is gone
 *   and the rename fails with `ENOENT`: a late holder can never free someone else's lock.
 * - Take over a stale lock: `rename(held.<them> → held.<me>)`. Exactly one taker succeeds, and
 *   since every holder's entry has a unique name, a taker can never displace a fresh lock that
 *   replaced the stale one it judged (the race of proper-lockfile #121, where a late `rm` deletes
 *   another taker's new lock, cannot happen). Never rm + create.
 * - A lock directory appears whole: it is built under a temporary name with its `free` token,
 *   the temporary directory is fsynced (its token is durable), and only then renamed into place,
 *   and the parent fsynced (the lock directory is durable). No process ever sees a lock without
 *   its token while the machine runs.
 * - A power cut can still leave one empty: on a file system that orders data and metadata
 *   loosely, a crash between an earlier process's rename and the fsync of its parent, or a
 *   file system that dropped the directory's contents. An empty lock directory is read as
 *   missing and built again, by renaming a new temporary directory over it: `rename` replaces
 *   an empty directory atomically, and fails with `ENOTEMPTY`/`EEXIST` once it holds a token. So
 *   of several processes mending it at once, the first one's rename lands and the others find a
 *   token (and use it) — never two tokens, and never a held lock replaced: a lock directory in
 *   use always holds exactly one entry (every later change renames that entry within the
 *   directory, which leaves it at no moment empty). A user that removes its lock directories
 *   after release (the skills' layer leaves no trace) empties one only after its `free` token
 *   is unlinked, which an acquirer's rename would have made fail: the same mend applies.
 *
 * Renames inside one small directory allocate and free no inode, so a lock costs two cheap
 * metadata updates per operation. They are not fsynced: a lock lives no longer than a process,
 * and a crash leaves at worst a held entry of a dead process, taken over as stale.
 */

/** The entry name of a free lock. */
export const LOCK_FREE_ENTRY = "free";
/** The prefix of a lock directory being built (beside the lock directories, in their parent). */
export const LOCK_INIT_PREFIX = ".init.";

/** What a held lock's entry says about its holder. */
export interface LockHolder {
  pid: number;
  /** A short hash of the holder's host name ({@link lockHostTag}). */
  host: string;
  /** Epoch ms (the holder host's `Date.now()`) when the lock was taken. */
  startedAt: number;
  token: string;
}

/** A lock directory as found ({@link inspectLockEntries}). */
export type LockInspection =
  | { state: "missing" }
  | { state: "free" }
  | { state: "held"; entry: string; holder: LockHolder | undefined; stale: boolean }
  | { state: "broken"; entries: string[] };

/** The tag of a host name in lock entries: 8 hex digits of its sha256. */
export function lockHostTag(hostname: string): string {
  return createHash("sha256").update(hostname).digest("hex").slice(0, 8);
}

/** The entry name of a held lock. */
export function heldLockEntry(holder: LockHolder): string {
  return `held.${holder.pid}.${holder.host}.${holder.startedAt}.${holder.token}`;
}

const HELD_PATTERN = /^held\.(\d+)\.([0-9a-f]{8})\.(\d+)\.([0-9a-f]+)$/;

/** The holder a held entry names, or `undefined` for an entry no Keel lock made. */
export function parseLockHolder(entry: string): LockHolder | undefined {
  const match = HELD_PATTERN.exec(entry);
  if (!match) return undefined;
  return { pid: Number(match[1]), host: match[2]!, startedAt: Number(match[3]), token: match[4]! };
}

const thisHost = lockHostTag(osHostname());

/**
 * Lock tokens: a random prefix per process and a counter, so that every entry this process
 * makes has its own name (with the pid and the start time in it) without drawing random bytes
 * on every lock (which costs a few microseconds each).
 */
const tokenPrefix = randomBytes(4).toString("hex");
let tokenCounter = 0;
function nextToken(): string {
  tokenCounter = (tokenCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${tokenPrefix}${tokenCounter.toString(16)}`;
}

/** True unless the process is known to be gone (`ESRCH`). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoOf(error) !== "ESRCH";
  }
}

function errnoOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as { code?: string }).code : undefined;
}

/**
 * Stale means: the holder is a process of this host that no longer exists, or the lock is older
 * than `staleMs` (a hung holder, or one on another host). An entry that does not name a holder
 * was not made by a Keel lock and is stale too.
 */
function judgeStale(holder: LockHolder | undefined, staleMs: number, now: number): boolean {
  if (!holder) return true;
  if (now - holder.startedAt > staleMs) return true;
  if (holder.host !== thisHost || holder.pid === process.pid) return false;
  return !processAlive(holder.pid);
}

/**
 * Judges the entries of a lock directory: `free`; `missing` when there are none (what a power
 * cut, or a release that removes its directory, leaves); `held`, with whether it is stale, for
 * one other entry; `broken` for several.
 */
export function inspectLockEntries(entries: readonly string[], staleMs: number, now = Date.now()): LockInspection {
  if (entries.includes(LOCK_FREE_ENTRY)) return { state: "free" };
  if (entries.length === 0) return { state: "missing" };
  const [entry, ...others] = entries;
  if (entry === undefined || others.length > 0) return { state: "broken", entries: [...entries] };
  const holder = parseLockHolder(entry);
  return { state: "held", entry, holder, stale: judgeStale(holder, staleMs, now) };
}

/**
 * The file-system calls of the protocol, each synchronous or asynchronous (the filesystem
 * store's are synchronous, the skills' asynchronous): the user's own layer, so that its fault
 * injection and power-loss tests cover the lock too. Failures throw errors with an errno `code`.
 */
export interface RenameLockIo {
  rename(from: string, to: string): void | Promise<void>;
  /** The names in a directory; throws `ENOENT` when it is missing. */
  readdir(directory: string): readonly string[] | Promise<readonly string[]>;
  /** Creates one directory (not its parents); `EEXIST` when it is there. */
  mkdir(directory: string): void | Promise<void>;
  /** Creates an empty file, never replacing one. */
  createEmptyFile(file: string): void | Promise<void>;
  /** fsyncs a directory (so that what was created or renamed in it survives a power loss). */
  syncDirectory(directory: string): void | Promise<void>;
  /** Removes a directory being built and what is in it; errors ignored (cleanup). */
  removeBuilding(directory: string): void | Promise<void>;
}

/**
 * Creates each of `directories` (in order, parents first) that is missing, fsyncing its parent
 * after creating it, so that a power cut cannot lose it.
 */
async function makeParents(io: RenameLockIo, directories: readonly string[]): Promise<void> {
  for (const directory of directories) {
    try {
      await io.mkdir(directory);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
      continue;
    }
    await io.syncDirectory(path.dirname(directory));
  }
}

/**
 * Builds a missing or empty lock directory: its `free` token in a temporary directory beside it,
 * that directory fsynced, renamed into place (over an empty one), the parent fsynced. When
 * another process made it first (or a user that removes its lock directories removed the parent
 * meanwhile) it returns quietly: the caller looks again.
 */
export async function buildLockDirectory(io: RenameLockIo, lockDirectory: string, parents: readonly string[] = []): Promise<void> {
  await makeParents(io, parents);
  const parent = path.dirname(lockDirectory);
  const building = path.join(parent, `${LOCK_INIT_PREFIX}${process.pid}.${randomBytes(6).toString("hex")}`);
  try {
    await io.mkdir(building);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return;
    throw error;
  }
  try {
    await io.createEmptyFile(path.join(building, LOCK_FREE_ENTRY));
    await io.syncDirectory(building);
    await io.rename(building, lockDirectory);
  } catch (error) {
    await io.removeBuilding(building);
    // Someone else made it first (EPERM: Windows' word for it): use theirs.
    if (!["EEXIST", "ENOTEMPTY", "EPERM", "ENOENT"].includes(errnoOf(error) ?? "")) throw error;
    return;
  }
  await io.syncDirectory(parent);
}

/** Options of {@link acquireRenameLock}. */
export interface RenameLockOptions {
  io: RenameLockIo;
  /** The lock directory. */
  directory: string;
  /** Directories to create (durably, parents first) before the lock directory is built; none by default. */
  parents?: readonly string[];
  /** How long to wait for a busy lock. */
  waitMs: number;
  /** A lock older than this, or whose holder process on this host is gone, is stale. */
  staleMs: number;
  /** The longest pause between two looks at a busy lock (ms; the first is 1 ms, doubling up to it). */
  maxPollMs: number;
  /** The error when `waitMs` has passed and the lock is still held (or broken). */
  busy: (seen: LockInspection) => KeelError;
  /** When given, a lock directory holding several entries is refused at once with this error, not waited on. */
  broken?: (entries: readonly string[]) => KeelError;
  /** Told of a stale lock taken over (its entry). */
  tookOver?: (entry: string) => void;
}

/** A lock held: release it with `rename(path → freePath)` ({@link releaseRenameLock}). */
export interface HeldRenameLock {
  /** The lock directory. */
  directory: string;
  /** This holder's entry. */
  path: string;
  /** The entry of the lock once free. */
  freePath: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Acquires a rename-token lock (see the protocol above): builds the lock directory when it is
 * missing or empty, takes over a stale holder's, and waits, polling with jitter, up to
 * `waitMs` for a busy one before it throws `busy`'s error.
 */
export async function acquireRenameLock(options: RenameLockOptions): Promise<HeldRenameLock> {
  const { io, directory, staleMs } = options;
  const startedAt = Date.now();
  // Lock directories are absolute and normalized: plain concatenation is path.join here, and cheaper.
  const mine = `${directory}${path.sep}${heldLockEntry({ pid: process.pid, host: thisHost, startedAt, token: nextToken() })}`;
  const freePath = `${directory}${path.sep}${LOCK_FREE_ENTRY}`;
  const held: HeldRenameLock = { directory, path: mine, freePath };
  const deadline = startedAt + options.waitMs;
  let delay = 1;
  // Building a missing or empty lock is progress, not waiting: once more even past the deadline.
  let rebuiltLate = false;
  for (;;) {
    try {
      await io.rename(freePath, mine);
      return held;
    } catch (error) {
      const code = errnoOf(error);
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
    }
    let entries: readonly string[];
    try {
      entries = await io.readdir(directory);
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw error;
      entries = [];
    }
    const seen = inspectLockEntries(entries, staleMs);
    if (seen.state === "free") continue;
    if (seen.state === "missing") {
      await buildLockDirectory(io, directory, options.parents);
      if (Date.now() < deadline) continue;
      if (!rebuiltLate) {
        rebuiltLate = true;
        continue;
      }
    }
    if (seen.state === "broken" && options.broken) throw options.broken(seen.entries);
    if (seen.state === "held" && seen.stale) {
      try {
        await io.rename(`${directory}${path.sep}${seen.entry}`, mine);
        options.tookOver?.(seen.entry);
        return held;
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw error;
        continue;
      }
    }
    if (Date.now() >= deadline) throw options.busy(seen);
    await sleep(delay * (0.5 + Math.random()));
    delay = Math.min(delay * 2, options.maxPollMs);
  }
}

/**
 * Releases a lock held: `rename(held.<me> → free)`. `"lost"` when the entry is gone (the lock
 * was taken over as stale while held: not ours to free); any other failure throws. Synchronous
 * over a synchronous `rename`.
 */
export function releaseRenameLock(io: Pick<RenameLockIo, "rename">, held: HeldRenameLock): "released" | "lost" | Promise<"released" | "lost"> {
  const lost = (error: unknown): "lost" => {
    if (errnoOf(error) === "ENOENT") return "lost";
    throw error;
  };
  let renamed: void | Promise<void>;
  try {
    renamed = io.rename(held.path, held.freePath);
  } catch (error) {
    return lost(error);
  }
  return renamed instanceof Promise ? renamed.then(() => "released" as const, lost) : "released";
}
