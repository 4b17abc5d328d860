/**
 * Test fixtures of the fs store's own tests: temporary store directories and stores opened over
 * the real file system with the bytes they read counted, all cleaned up after each test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { KeelStore } from "@keel/store";
import { afterEach } from "vitest";
import type { FsStoreWarning } from "../fs-store-options.js";
import { nodeFsIo, type FsIo } from "../internal/fs-io.js";
import { openFsStore } from "../internal/open-fs-store.js";

/** The file system {@link countingIo} gives: the real one, with what it did counted. */
export type CountingIo = FsIo & { syncs: () => number; bytesRead: () => number };

/**
 * The real file system, counting completed fsync/fdatasync calls and the bytes read from files
 * (`readSync`; whole-file reads are not used for logs).
 */
export function countingIo(): CountingIo {
  let syncs = 0;
  let bytes = 0;
  return {
    ...nodeFsIo,
    fsync: (fd) => nodeFsIo.fsync(fd).then(() => void (syncs += 1)),
    fdatasync: (fd) => nodeFsIo.fdatasync(fd).then(() => void (syncs += 1)),
    readSync: (fd, buffer, offset, length, position) => {
      const count = nodeFsIo.readSync(fd, buffer, offset, length, position);
      bytes += count;
      return count;
    },
    syncs: () => syncs,
    bytesRead: () => bytes,
  };
}

/** A store opened over {@link countingIo}, with the warnings it reported. */
export interface CountedStore {
  io: CountingIo;
  store: KeelStore;
  warnings: FsStoreWarning[];
}

/**
 * Registers an `afterEach` that closes every store opened and removes every directory made
 * through the returned helpers (call it once at the top of a test file).
 */
export function useCountedStores(prefix: string): {
  /** A new temporary directory, removed after the test. */
  tempDir: () => string;
  /** A store over `dir` and {@link countingIo}, closed after the test. */
  open: (dir: string) => CountedStore;
  /** Closes `store` after the test. */
  track: <T extends KeelStore>(store: T) => T;
} {
  const made: string[] = [];
  const stores: KeelStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    tempDir: () => {
      const dir = mkdtempSync(path.join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    open: (dir) => {
      const io = countingIo();
      const warnings: FsStoreWarning[] = [];
      const store = openFsStore({ dir, onWarning: (warning) => warnings.push(warning) }, io);
      stores.push(store);
      return { io, store, warnings };
    },
    track: (store) => {
      stores.push(store);
      return store;
    },
  };
}
