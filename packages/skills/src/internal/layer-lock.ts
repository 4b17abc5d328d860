import { join } from "node:path";
import { KeelError } from "@keel/core";
import { acquireRenameLock, releaseRenameLock, type RenameLockIo } from "@keel/store/kit";
import type { SkillIo } from "../skill-io.js";

/**
 * Cross-process locks of a layer's role directory: the rename-token locks of `@keel/store/kit`
 * (`rename-lock.ts` there gives the protocol and the races it avoids), a lock directory
 * `<layer>/.keel/locks/<role>`, made through the skills' file-system layer (so that fault
 * injection and the power-loss tests cover it). `.keel` and `locks` are fsynced into their
 * parents when created, and a lock directory appears whole and durable.
 *
 * Unlike the store's locks, these leave no trace: after release the holder unlinks `free` and
 * removes the (then empty) lock directory and its empty parents, so that an operation that
 * failed leaves the layer exactly as it found it. A waiter that meets an empty lock directory
 * treats it as missing and builds a new one (renaming a directory over an empty one is atomic);
 * a remover whose `unlink(free)` loses to an acquirer gets `ENOENT` and stops.
 */

/** Bounds of waiting for a lock. */
export interface LayerLockOptions {
  /** How long to wait for a busy lock before `unavailable`. */
  waitMs: number;
  /** A lock older than this, or whose holder process on this host is gone, is stale. */
  staleMs: number;
}

/** The protocol's calls over the skills' file-system layer. */
function lockIo(io: SkillIo): RenameLockIo {
  return {
    rename: (from, to) => io.rename(from, to),
    readdir: (directory) => io.readdir(directory),
    mkdir: (directory) => io.mkdir(directory),
    createEmptyFile: (file) => io.writeFile(file, new Uint8Array()),
    syncDirectory: (directory) => io.syncDirectory(directory),
    removeBuilding: (directory) => io.rm(directory).catch(() => undefined),
  };
}

async function rmdirQuietly(io: SkillIo, path: string): Promise<void> {
  try {
    await io.rmdir(path);
  } catch {
    // not empty (in use by someone else) or gone: both fine
  }
}

/**
 * Acquires the lock of `role` in `layerDirectory` (which must exist) and resolves its release.
 * `unavailable` (retryable) when another process holds it past `waitMs`.
 */
export async function acquireLayerLock(io: SkillIo, layerDirectory: string, role: string, options: LayerLockOptions): Promise<() => Promise<void>> {
  const keelDirectory = join(layerDirectory, ".keel");
  const locksDirectory = join(keelDirectory, "locks");
  const lockDirectory = join(locksDirectory, role);
  const renameIo = lockIo(io);
  const held = await acquireRenameLock({
    io: renameIo,
    directory: lockDirectory,
    parents: [keelDirectory, locksDirectory],
    waitMs: options.waitMs,
    staleMs: options.staleMs,
    // Operations hold a role for a copy or a swap of a skill's files: poll less often than the store.
    maxPollMs: 20,
    busy: (seen) => {
      const holders = seen.state === "held" ? [seen.entry] : seen.state === "broken" ? seen.entries : [];
      return new KeelError("unavailable", `role "${role}" of layer ${layerDirectory} is locked by another operation (${holders.join(", ")}); waited ${options.waitMs} ms: try again`, {
        details: { layer: layerDirectory, role, waitedMs: options.waitMs },
        retryable: true,
      });
    },
  });
  return async () => {
    try {
      if ((await releaseRenameLock(renameIo, held)) === "lost") return; // taken over while held: not ours to clean
    } catch {
      return;
    }
    try {
      await io.unlink(held.freePath);
    } catch {
      return; // someone acquired it meanwhile
    }
    await rmdirQuietly(io, lockDirectory);
    await rmdirQuietly(io, locksDirectory);
    await rmdirQuietly(io, keelDirectory);
  };
}
