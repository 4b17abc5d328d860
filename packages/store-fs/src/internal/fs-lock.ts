import { hostname } from "node:os";
import path from "node:path";
import { KeelError } from "@keel/core";
import {
  acquireRenameLock,
  buildLockDirectory,
  inspectLockEntries,
  LOCK_FREE_ENTRY,
  lockHostTag,
  releaseRenameLock,
  type LockInspection,
  type RenameLockIo,
} from "@keel/store/kit";
import { fsyncDirectory, isErrno, OPEN_CREATE_EXCLUSIVE, type FsIo } from "./fs-io.js";
import type { FsStoreWarning } from "../fs-store-options.js";

/**
 * The store's cross-process locks: the rename-token locks of `@keel/store/kit` (`rename-lock.ts`
 * there gives the protocol, the why and the races it avoids), one small directory per lockable
 * resource under `_keel/locks/`, made through the store's own file-system layer (so that fault
 * injection covers them) and only through its path guard (fs-contain.ts): a lock directory
 * replaced by a symbolic link is refused (`corrupt`), never renamed into. Within this process,
 * waiters queue in memory first. The store keeps its lock directories (a free lock is one rename
 * away); a lock lives no longer than a process, so its renames are not fsynced.
 */

const thisHostTag = lockHostTag(hostname());

/** The protocol's calls over the store's file-system layer (synchronous, but for the fsyncs). */
function lockIo(io: FsIo): RenameLockIo {
  return {
    rename: (from, to) => io.renameSync(from, to),
    readdir: (directory) => io.readdirSync(directory).map((entry) => entry.name),
    mkdir: (directory) => io.mkdirSync(directory),
    createEmptyFile: (file) => {
      io.closeSync(io.openSync(file, OPEN_CREATE_EXCLUSIVE));
    },
    syncDirectory: (directory) => fsyncDirectory(io, directory),
    removeBuilding: (directory) => removeBuilding(io, directory),
  };
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
  /** Throws `corrupt` unless a directory is inside the store without a link on the way (the store's path guard). */
  contain: (directory: string) => void;
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
  /** Reads a lock directory and judges whether it is stale (an empty one is `missing`). */
  inspect(lockDirectory: string): LockInspection;
  /**
   * Waits, writing nothing, until no live process holds the cross-process lock of `resource`
   * (its directory free, missing, stale or broken: no holder is in its critical section), by
   * reading the lock directory; `unavailable` after the wait time, as {@link LockManager.acquire}.
   * Reads of a store opened with `create: false` use it where others take the lock: the lock may
   * be taken again right after, so what it proves is that whoever held it when the wait began
   * has left.
   */
  awaitUnheld(resource: string): Promise<void>;
  /** Builds a missing or empty lock directory (`check({ repair: true })`). */
  initialize(lockDirectory: string): Promise<void>;
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

/** Creates the lock manager of one store. */
export function createLockManager(options: LockManagerOptions): LockManager {
  const { io, staleMs, waitMs } = options;
  const renameIo = lockIo(io);

  const inspect = (lockDirectory: string): LockInspection => {
    let entries: string[];
    try {
      entries = io.readdirSync(lockDirectory).map((entry) => entry.name);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return { state: "missing" };
      throw error;
    }
    return inspectLockEntries(entries, staleMs);
  };

  const busyError = (resource: string, lockDirectory: string, seen: LockInspection) => {
    const holder = seen.state === "held" ? seen.holder : undefined;
    const where = holder?.host === thisHostTag ? "this host" : `host ${holder?.host ?? "?"}`;
    return new KeelError("unavailable", `${resource} is locked by process ${holder?.pid ?? "?"} on ${where}; waited ${waitMs} ms`, {
      details: { resource, location: lockDirectory, holderPid: holder?.pid ?? null, waitedMs: waitMs },
      retryable: true,
    });
  };

  const lockOne = async (resource: string): Promise<() => void> => {
    const lockDirectory = options.directoryOf(resource);
    options.contain(lockDirectory);
    const held = await acquireRenameLock({
      io: renameIo,
      directory: lockDirectory,
      parents: [options.directory],
      waitMs,
      staleMs,
      // Critical sections last about a millisecond (one or two fsyncs): poll often.
      maxPollMs: 4,
      broken: (entries) =>
        new KeelError("io_failed", `the lock directory ${lockDirectory} holds ${JSON.stringify(entries)}, not one token; remove it when no process uses the store`, {
          details: { location: lockDirectory, resource },
          retryable: false,
        }),
      busy: (seen) => busyError(resource, lockDirectory, seen),
      tookOver: (entry) => options.warn({ type: "took-over-stale-lock", location: lockDirectory, message: `took over the stale lock of ${resource} (${entry})` }),
    });
    return () => {
      try {
        if (releaseRenameLock(renameIo, held) === "released") return;
        options.warn({ type: "lock-lost", location: lockDirectory, message: `the lock of ${resource} was taken over while held (held longer than lockStaleMs)` });
      } catch (error) {
        options.warn({ type: "lock-release-failed", location: lockDirectory, message: `could not release the lock of ${resource}: ${String(error)}` });
      }
    };
  };

  return {
    inspect,
    awaitUnheld: async (resource) => {
      const lockDirectory = options.directoryOf(resource);
      options.contain(lockDirectory);
      const deadline = Date.now() + waitMs;
      for (;;) {
        const seen = inspect(lockDirectory);
        if (seen.state !== "held" || seen.stale) return;
        if (Date.now() >= deadline) throw busyError(resource, lockDirectory, seen);
        // Critical sections last about a millisecond: poll as often as an acquirer does.
        await new Promise((resolve) => setTimeout(resolve, 4));
      }
    },
    initialize: (lockDirectory) => buildLockDirectory(renameIo, lockDirectory, [options.directory]),
    free: (lockDirectory, entry) => {
      try {
        io.renameSync(path.join(lockDirectory, entry), path.join(lockDirectory, LOCK_FREE_ENTRY));
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
