import { randomBytes, createHash } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import { KeelError } from "@keel/core";
import { errnoOf, type SkillIo } from "../skill-io.js";

/**
 * Cross-process locks of a layer's role directory, as rename tokens (the protocol of
 * `@keel/store-fs`'s `fs-lock.ts`). A lock is a directory `<layer>/.keel/locks/<role>` holding
 * exactly one entry: `free`, or `held.<pid>.<host tag>.<startedAt>.<token>` naming its holder.
 *
 * - Acquire: `rename(free → held.<me>)`: of several processes exactly one succeeds.
 * - Release: `rename(held.<me> → free)`; a holder whose lock was taken over gets `ENOENT` and can
 *   never free someone else's lock.
 * - Take over a stale lock: `rename(held.<them> → held.<me>)`: one taker wins, and since every
 *   entry has a unique name a taker cannot displace a fresh lock that replaced the stale one.
 * - A lock directory appears whole: built with its `free` token under a temporary name, renamed
 *   into place.
 *
 * Unlike the store's locks, these leave no trace: after release the holder unlinks `free` and
 * removes the (then empty) lock directory and its empty parents, so that an operation that
 * failed leaves the layer exactly as it found it. A waiter that meets an empty lock directory
 * treats it as missing and builds a new one (renaming a directory over an empty one is atomic);
 * a remover whose `unlink(free)` loses to an acquirer gets `ENOENT` and stops.
 */

const FREE = "free";
const HELD = /^held\.(\d+)\.([0-9a-f]{8})\.(\d+)\.([0-9a-f]+)$/;
const thisHost = createHash("sha256").update(hostname()).digest("hex").slice(0, 8);

/** Bounds of waiting for a lock. */
export interface LayerLockOptions {
  /** How long to wait for a busy lock before `unavailable`. */
  waitMs: number;
  /** A lock older than this, or whose holder process on this host is gone, is stale. */
  staleMs: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoOf(error) !== "ESRCH";
  }
}

function isStale(entry: string, staleMs: number): boolean {
  const match = HELD.exec(entry);
  if (!match) return true;
  const [, pid, host, startedAt] = match;
  if (Date.now() - Number(startedAt) > staleMs) return true;
  if (host !== thisHost || Number(pid) === process.pid) return false;
  return !alive(Number(pid));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function mkdirIfMissing(io: SkillIo, path: string): Promise<void> {
  try {
    await io.mkdir(path);
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
  }
}

async function rmdirQuietly(io: SkillIo, path: string): Promise<void> {
  try {
    await io.rmdir(path);
  } catch {
    // not empty (in use by someone else) or gone: both fine
  }
}

/** Builds a lock directory with its `free` token and renames it into place (or finds one made by someone else). */
async function initialize(io: SkillIo, keelDirectory: string, locksDirectory: string, lockDirectory: string): Promise<void> {
  await mkdirIfMissing(io, keelDirectory);
  await mkdirIfMissing(io, locksDirectory);
  const building = join(locksDirectory, `.init.${process.pid}.${randomBytes(6).toString("hex")}`);
  try {
    await io.mkdir(building);
  } catch (error) {
    // A releaser removed the (empty) parents meanwhile: the caller loops and tries again.
    if (errnoOf(error) === "ENOENT") return;
    throw error;
  }
  try {
    await io.writeFile(join(building, FREE), new Uint8Array());
    await io.rename(building, lockDirectory);
  } catch (error) {
    await io.rm(building).catch(() => undefined);
    if (!["EEXIST", "ENOTEMPTY", "EPERM", "ENOENT"].includes(errnoOf(error) ?? "")) throw error;
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
  const mine = join(lockDirectory, `held.${process.pid}.${thisHost}.${Date.now()}.${randomBytes(6).toString("hex")}`);
  const free = join(lockDirectory, FREE);
  const release = async () => {
    try {
      await io.rename(mine, free);
    } catch {
      return; // taken over while held: not ours to clean
    }
    try {
      await io.unlink(free);
    } catch {
      return; // someone acquired it meanwhile
    }
    await rmdirQuietly(io, lockDirectory);
    await rmdirQuietly(io, locksDirectory);
    await rmdirQuietly(io, keelDirectory);
  };
  const deadline = Date.now() + options.waitMs;
  let delay = 2;
  for (;;) {
    try {
      await io.rename(free, mine);
      return release;
    } catch (error) {
      if (errnoOf(error) !== "ENOENT" && errnoOf(error) !== "ENOTDIR") throw error;
    }
    let entries: string[];
    try {
      entries = await io.readdir(lockDirectory);
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw error;
      entries = [];
    }
    if (entries.includes(FREE)) continue;
    const held = entries.filter((entry) => !entry.startsWith("."));
    if (held.length === 0) {
      // An empty directory is a lock being removed (or left by a releaser that crashed): remove
      // it (refused when a new one was renamed in meanwhile), then build a fresh one.
      if (entries.length === 0) await rmdirQuietly(io, lockDirectory);
      await initialize(io, keelDirectory, locksDirectory, lockDirectory);
      if (Date.now() < deadline) continue;
    }
    if (held.length === 1 && entries.length === 1 && isStale(held[0]!, options.staleMs)) {
      try {
        await io.rename(join(lockDirectory, held[0]!), mine);
        return release;
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw error;
        continue;
      }
    }
    if (Date.now() >= deadline) {
      throw new KeelError("unavailable", `role "${role}" of layer ${layerDirectory} is locked by another operation (${held.join(", ")}); waited ${options.waitMs} ms: try again`, {
        details: { layer: layerDirectory, role, waitedMs: options.waitMs },
        retryable: true,
      });
    }
    await sleep(delay * (0.5 + Math.random()));
    delay = Math.min(delay * 2, 20);
  }
}
