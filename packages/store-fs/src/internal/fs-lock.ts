import { createHash, randomBytes } from "node:crypto";
import { hostname as osHostname } from "node:os";
import path from "node:path";
import { KeelError } from "@keel/core";
import { closeQuietly, isErrno, type FsIo } from "./fs-io.js";
import type { FsStoreWarning } from "../fs-store-options.js";

/**
 * Cross-process locks as rename tokens. Each lockable resource has a small directory under
 * `_keel/locks/` holding exactly one entry: `free`, or `held.<pid>.<host tag>.<startedAt>.<token>`
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
 * - A lock directory appears whole: it is built under a temporary name with its `free` token
 *   and renamed into place, so no process ever sees a lock without its token.
 *
 * Renames inside one small directory allocate and free no inode, so a lock costs two cheap
 * metadata updates per operation.
 */

/** The entry name of a free lock. */
export const FREE_ENTRY = "free";
/** The prefix of a lock directory being built. */
export const INIT_PREFIX = ".init.";

/** What a held lock's entry says about its holder. */
export interface LockHolder {
  pid: number;
  /** A short hash of the holder's host name ({@link hostTag}). */
  host: string;
  /** Epoch ms (the holder host's `Date.now()`) when the lock was taken. */
  startedAt: number;
  token: string;
}

/** A lock as found on disk. */
export type LockInspection =
  | { state: "missing" }
  | { state: "free" }
  | { state: "held"; entry: string; holder: LockHolder | undefined; stale: boolean }
  | { state: "broken"; entries: string[] };

/** The tag of a host name in lock entries: 8 hex digits of its sha256. */
export function hostTag(hostname: string): string {
  return createHash("sha256").update(hostname).digest("hex").slice(0, 8);
}

/** The entry name of a held lock. */
export function heldEntry(holder: LockHolder): string {
  return `held.${holder.pid}.${holder.host}.${holder.startedAt}.${holder.token}`;
}

const HELD_PATTERN = /^held\.(\d+)\.([0-9a-f]{8})\.(\d+)\.([0-9a-f]+)$/;

function parseHolder(entry: string): LockHolder | undefined {
  const match = HELD_PATTERN.exec(entry);
  if (!match) return undefined;
  return { pid: Number(match[1]), host: match[2]!, startedAt: Number(match[3]), token: match[4]! };
}

const thisHost = hostTag(osHostname());

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
    return !isErrno(error, "ESRCH");
  }
}

/**
 * Stale means: the holder is a process of this host that no longer exists, or the lock is older
 * than `staleMs` (a hung holder, or one on another host). An entry that does not name a holder
 * was not made by a Keel store and is stale too.
 */
function judgeStale(holder: LockHolder | undefined, staleMs: number, now: number): boolean {
  if (!holder) return true;
  if (now - holder.startedAt > staleMs) return true;
  if (holder.host !== thisHost || holder.pid === process.pid) return false;
  return !processAlive(holder.pid);
}

/** Options of {@link createLockManager}. */
export interface LockManagerOptions {
  io: FsIo;
  /** The directory of the lock directories (created on demand). */
  directory: string;
  /** Maps a resource name to its lock directory. */
  directoryOf: (resource: string) => string;
  /** A lock older than this, or whose holder process on this host is gone, is stale. */
  staleMs: number;
  /** How long to wait for a busy lock before `unavailable`. */
  waitMs: number;
  warn: (warning: FsStoreWarning) => void;
}

/** Acquires and releases cross-process locks. */
export interface LockManager {
  /**
   * Acquires the locks of `resources` in the given order (callers keep one global order:
   * the document or log first, then lease locks sorted by name) and resolves a release function.
   * Within this process, waiters queue in memory; across processes, through the lock directory.
   */
  acquire(resources: readonly string[]): Promise<() => void>;
  /**
   * Only the in-process half of a resource's lock: it excludes this process's other holders of
   * the resource (every store instance of the process shares it), not other processes.
   */
  acquireLocal(resource: string): Promise<() => void>;
  /**
   * Only the cross-process half of a resource's lock (its lock directory). The caller holds the
   * in-process half already ({@link LockManager.acquireLocal}).
   */
  acquireCrossProcess(resource: string): Promise<() => void>;
  /** Reads a lock directory and judges whether it is stale. */
  inspect(lockDirectory: string): LockInspection;
  /** Frees a stale lock (`rename(held.<them> → free)`); false when it changed meanwhile. */
  free(lockDirectory: string, entry: string): boolean;
}

/** In-process queues, per lock directory, shared by every store instance of this process. */
const queues = new Map<string, Promise<void>>();

async function lockInProcess(key: string): Promise<() => void> {
  const previous = queues.get(key) ?? Promise.resolve();
  let release!: () => void;
  const current = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = previous.then(() => current);
  queues.set(key, tail);
  await previous;
  return () => {
    release();
    if (queues.get(key) === tail) queues.delete(key);
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Creates the lock manager of one store. */
export function createLockManager(options: LockManagerOptions): LockManager {
  const { io, staleMs, waitMs } = options;

  const inspect = (lockDirectory: string): LockInspection => {
    let entries: string[];
    try {
      entries = io.readdirSync(lockDirectory).map((entry) => entry.name);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return { state: "missing" };
      throw error;
    }
    if (entries.includes(FREE_ENTRY)) return { state: "free" };
    const [entry, ...others] = entries;
    if (entry === undefined || others.length > 0) return { state: "broken", entries };
    const holder = parseHolder(entry);
    return { state: "held", entry, holder, stale: judgeStale(holder, staleMs, Date.now()) };
  };

  /** Builds a lock directory with its `free` token under a temporary name, then renames it into place. */
  const initialize = (lockDirectory: string) => {
    try {
      io.mkdirSync(options.directory);
    } catch (error) {
      if (!isErrno(error, "EEXIST")) throw error;
    }
    const building = path.join(options.directory, `${INIT_PREFIX}${process.pid}.${randomBytes(6).toString("hex")}`);
    io.mkdirSync(building);
    let fd: number | undefined;
    try {
      fd = io.openSync(path.join(building, FREE_ENTRY), "wx");
      io.closeSync(fd);
      fd = undefined;
      io.renameSync(building, lockDirectory);
    } catch (error) {
      closeQuietly(io, fd);
      removeBuilding(io, building);
      // Someone else made it first: use theirs.
      if (!isErrno(error, "EEXIST", "ENOTEMPTY")) throw error;
    }
  };

  const lockOne = async (resource: string): Promise<() => void> => {
    const lockDirectory = options.directoryOf(resource);
    const startedAt = Date.now();
    const mine = heldEntry({ pid: process.pid, host: thisHost, startedAt, token: nextToken() });
    // Lock directories are absolute and normalized: plain concatenation is path.join here, and cheaper.
    const minePath = `${lockDirectory}${path.sep}${mine}`;
    const freePath = `${lockDirectory}${path.sep}${FREE_ENTRY}`;
    const release = () => {
      try {
        io.renameSync(minePath, freePath);
      } catch (error) {
        options.warn(
          isErrno(error, "ENOENT")
            ? { type: "lock-lost", location: lockDirectory, message: `the lock of ${resource} was taken over while held (held longer than lockStaleMs)` }
            : { type: "lock-release-failed", location: lockDirectory, message: `could not release the lock of ${resource}: ${String(error)}` },
        );
      }
    };
    const deadline = startedAt + waitMs;
    let delay = 1;
    for (;;) {
      try {
        io.renameSync(freePath, minePath);
        return release;
      } catch (error) {
        if (!isErrno(error, "ENOENT")) throw error;
      }
      const seen = inspect(lockDirectory);
      if (seen.state === "missing") {
        initialize(lockDirectory);
        continue;
      }
      if (seen.state === "free") continue;
      if (seen.state === "broken") {
        throw new KeelError("io_failed", `the lock directory ${lockDirectory} holds ${JSON.stringify(seen.entries)}, not one token; remove it when no process uses the store`, {
          details: { location: lockDirectory, resource },
          retryable: false,
        });
      }
      if (seen.stale) {
        try {
          io.renameSync(path.join(lockDirectory, seen.entry), minePath);
          options.warn({ type: "took-over-stale-lock", location: lockDirectory, message: `took over the stale lock of ${resource} (${seen.entry})` });
          return release;
        } catch (error) {
          if (!isErrno(error, "ENOENT")) throw error;
          continue;
        }
      }
      if (Date.now() >= deadline) {
        const where = seen.holder?.host === thisHost ? "this host" : `host ${seen.holder?.host ?? "?"}`;
        throw new KeelError("unavailable", `${resource} is locked by process ${seen.holder?.pid ?? "?"} on ${where}; waited ${waitMs} ms`, {
          details: { resource, location: lockDirectory, holderPid: seen.holder?.pid ?? null, waitedMs: waitMs },
          retryable: true,
        });
      }
      // Critical sections last about a millisecond (one or two fsyncs): poll often, with jitter
      // so that waiting processes do not retry in lockstep.
      await sleep(delay * (0.5 + Math.random()));
      delay = Math.min(delay * 2, 4);
    }
  };

  return {
    inspect,
    free: (lockDirectory, entry) => {
      try {
        io.renameSync(path.join(lockDirectory, entry), path.join(lockDirectory, FREE_ENTRY));
        return true;
      } catch (error) {
        if (isErrno(error, "ENOENT")) return false;
        throw error;
      }
    },
    acquireLocal: (resource) => lockInProcess(options.directoryOf(resource)),
    acquireCrossProcess: (resource) => lockOne(resource),
    acquire: async (resources) => {
      const releases: (() => void)[] = [];
      const releaseAll = () => {
        for (const undo of releases.splice(0).reverse()) undo();
      };
      try {
        for (const resource of resources) {
          releases.push(await lockInProcess(options.directoryOf(resource)));
          releases.push(await lockOne(resource));
        }
      } catch (error) {
        releaseAll();
        throw error;
      }
      return releaseAll;
    },
  };
}

/** Removes a lock or lease directory that was being built, with what is in it (cleanup, errors ignored). */
export function removeBuilding(io: FsIo, building: string): void {
  try {
    for (const dirent of io.readdirSync(building)) io.unlinkSync(path.join(building, dirent.name));
  } catch {
    // may be gone already
  }
  try {
    io.rmdirSync(building);
  } catch {
    // cleanup only
  }
}
