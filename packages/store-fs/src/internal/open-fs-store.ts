import { realpathSync } from "node:fs";
import path from "node:path";
import { KeelError, systemClock, validateOrThrow } from "@keel/core";
import { type KeelStore } from "@keel/store";
import { DEFAULT_MAX_VALUE_BYTES, validateCheckOptions } from "@keel/store/kit";
import { err, errAsync, ok, ResultAsync } from "neverthrow";
import { FsStoreOptionsSchema, type FsStoreOptions, type FsStoreWarning } from "../fs-store-options.js";
import { createDocCache } from "./doc-cache.js";
import { checkStore } from "./fs-check.js";
import type { FsContext } from "./fs-context.js";
import { createFsDocStore } from "./fs-docs.js";
import { ensureDirectorySync } from "./fs-durable-write.js";
import { createPathGuard, type PathGuard } from "./fs-contain.js";
import { fsyncDirectorySync, isErrno, nodeFsIo, toStoreError, withModes, type FsIo } from "./fs-io.js";
import { createFsLeaseStore } from "./fs-leases.js";
import { createLockManager } from "./fs-lock.js";
import { createHolderBook, type HolderBook } from "./lease-entry.js";
import { createLeaseEpoch } from "./lease-epoch.js";
import { createFsLogStore } from "./fs-logs.js";
import { storePaths, type StorePaths } from "./fs-paths.js";
import { checkLayout, requireLayout } from "./store-layout.js";
import { createLogIndexCache } from "./log-index.js";
import { createBackgroundSync } from "./log-sync.js";

/**
 * Creates the store's own directory and its missing ancestors (synchronously, at construction),
 * fsyncing the parent of each one it creates: a power cut must not lose the store's directory
 * with the acknowledged writes in it.
 */
function makeDirectories(io: FsIo, directory: string): void {
  try {
    if (io.statSync(directory).isDirectory()) return;
    throw Object.assign(new Error(`${directory} exists and is not a directory`), { code: "ENOTDIR", path: directory });
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
  }
  makeDirectories(io, path.dirname(directory));
  try {
    io.mkdirSync(directory);
  } catch (error) {
    if (!isErrno(error, "EEXIST")) throw error;
    return;
  }
  // The new directory's entry in its parent, durable before anything is written in it.
  fsyncDirectorySync(io, path.dirname(directory));
}

/**
 * Checks, for `create: false`, that the store's own directory is there, and changes nothing:
 * a missing path, or one that is not a directory, is `not_found`.
 */
function requireDirectory(io: FsIo, directory: string): void {
  const notFound = (why: string) =>
    new KeelError("not_found", `no Keel store at ${directory}: ${why} (nothing was created)`, { details: { dir: directory } });
  try {
    if (!io.statSync(directory).isDirectory()) throw notFound("it is not a directory");
  } catch (error) {
    if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) throw notFound("the directory does not exist");
    throw error;
  }
}

/**
 * Makes the internal directories and checks the layout marker, unless a symbolic link (or
 * anything else than a directory) stands where `_keel/`, `_keel/locks` or `_keel/leases` should
 * be: then nothing is read or written through it, the store opens, every operation that needs
 * those directories answers `corrupt`, and `check({ repair: true })` moves the entry into
 * quarantine and makes the directories (see fs-check.ts). Returns what was mended, if anything.
 */
function prepareInternal(io: FsIo, paths: StorePaths, guard: PathGuard, holders: HolderBook): string | undefined {
  try {
    guard.contain(paths.locks);
    guard.contain(paths.leases);
  } catch (error) {
    if (KeelError.is(error, "corrupt")) return undefined;
    throw error;
  }
  ensureDirectorySync(io, paths.root, paths.locks);
  ensureDirectorySync(io, paths.root, paths.leases);
  return checkLayout(io, paths, holders);
}

/**
 * What {@link prepareInternal} checks, for `create: false`, without writing: the marker must name
 * a store of this code's layout (see `requireLayout`). A link where `_keel/` should be is
 * `corrupt` here rather than opened: the marker behind it cannot be trusted.
 */
function requireInternal(io: FsIo, paths: StorePaths, guard: PathGuard): void {
  guard.contain(paths.locks);
  guard.contain(paths.leases);
  requireLayout(io, paths);
}

/**
 * Opens a filesystem store over an explicit {@link FsIo} (the real one by default). Tests pass a
 * faulty one; users call `createFsStore`.
 */
export function openFsStore(options: FsStoreOptions, io: FsIo = nodeFsIo): KeelStore {
  validateOrThrow(FsStoreOptionsSchema, options, "fs store options");
  io = withModes(io, { file: options.fileMode ?? 0o600, directory: options.directoryMode ?? 0o700 });
  const create = options.create !== false;
  let paths: StorePaths;
  try {
    const root = path.resolve(options.dir);
    if (create) makeDirectories(io, root);
    else requireDirectory(io, root);
    // The root as a real path: every path below it is then checked to have no link on the way.
    paths = storePaths(realpathSync.native(root));
  } catch (error) {
    throw toStoreError(error, `open the store directory ${options.dir}`);
  }
  const guard = createPathGuard(io, paths.root);
  const holders = createHolderBook(io, paths, (directory) => guard.contain(directory));
  let mended: string | undefined;
  try {
    if (create) mended = prepareInternal(io, paths, guard, holders);
    else requireInternal(io, paths, guard);
  } catch (error) {
    throw toStoreError(error, `open the store directory ${paths.root}`);
  }
  const maxValueBytes = options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES;
  const lockStaleMs = options.lockStaleMs ?? 10_000;
  const warn = (warning: FsStoreWarning) => {
    try {
      options.onWarning?.(warning);
    } catch {
      // a listener's failure must not fail the operation that reported
    }
  };
  // Operations in flight, so that close() can wait for them: a counter and the waiters of zero
  // (cheaper per operation than a set of promises).
  let inFlight = 0;
  const idle: (() => void)[] = [];
  const settle = () => {
    inFlight -= 1;
    if (inFlight === 0) for (const resolve of idle.splice(0)) resolve();
  };
  let closed = false;

  const locks = createLockManager({
    io,
    directory: paths.locks,
    directoryOf: paths.lockDirectory,
    staleMs: lockStaleMs,
    contain: (directory) => guard.contain(directory),
    waitMs: options.lockWaitMs ?? 10_000,
    warn,
  });
  if (mended) warn({ type: "rewrote-marker", location: paths.marker, message: mended });
  // The id sidecars are a cache: with a link where their directory should be, logs go without them.
  const sidecarOf = (file: string) => {
    try {
      guard.contain(paths.logSidecars);
    } catch (error) {
      if (KeelError.is(error, "corrupt")) return undefined;
      throw error;
    }
    return paths.logSidecar(file);
  };
  // create: false: reads write nothing (see FsContext.quietReads), id sidecars included.
  const logIndex = createLogIndexCache(io, sidecarOf, { quietReads: !create });
  const context: FsContext = {
    io,
    paths,
    clock: options.clock ?? systemClock,
    maxValueBytes,
    lockStaleMs,
    quietReads: !create,
    warn,
    logIndex,
    backgroundSync: createBackgroundSync(io, logIndex),
    docCache: createDocCache(),
    guard,
    locks,
    ownLeases: new Map(),
    leaseEntries: new Map(),
    holders,
    leaseEpoch: createLeaseEpoch({ io, paths, locks, contain: (directory) => guard.contain(directory) }),
    operation: <T>(name: string, work: () => Promise<T> | T) => {
      if (closed) return errAsync(new KeelError("unavailable", `the fs store at ${paths.root} is closed`, { retryable: false }));
      // The work is this package's own code: a synchronous throw is caught here and becomes a
      // rejected promise, so nothing escapes the ResultAsync (the reason for fromThrowable).
      let running: Promise<T>;
      try {
        running = Promise.resolve(work());
      } catch (error) {
        running = Promise.reject(error);
      }
      inFlight += 1;
      const settled = running.then(
        (value) => (settle(), ok(value)),
        (error: unknown) => (settle(), err(toStoreError(error, name))),
      );
      return new ResultAsync<T, KeelError>(settled);
    },
  };

  return {
    capabilities: { scope: "host", durability: "fsync", maxValueBytes, bufferedAppends: true },
    docs: createFsDocStore(context),
    logs: createFsLogStore(context),
    leases: createFsLeaseStore(context),
    check: (checkOptions) => {
      const parsed = validateCheckOptions(checkOptions);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("check the store", () => checkStore(context, parsed.value.repair));
    },
    close: async () => {
      closed = true;
      while (inFlight > 0) await new Promise<void>((resolve) => idle.push(resolve));
      // Appends made with `durable: false` are synced before the store reports closed.
      await context.backgroundSync.flush();
    },
  };
}
