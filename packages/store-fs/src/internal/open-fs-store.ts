import { realpathSync } from "node:fs";
import path from "node:path";
import { KeelError, systemClock, validate, validateOrThrow } from "@keel/core";
import { type KeelStore } from "@keel/store";
import { DEFAULT_MAX_VALUE_BYTES } from "@keel/store/kit";
import { err, errAsync, ok, ResultAsync } from "neverthrow";
import { z } from "zod";
import { FsStoreOptionsSchema, type FsStoreOptions, type FsStoreWarning } from "../fs-store-options.js";
import { createDocCache } from "./doc-cache.js";
import { checkStore } from "./fs-check.js";
import type { FsContext } from "./fs-context.js";
import { createFsDocStore } from "./fs-docs.js";
import { writeFileAtomicSync } from "./fs-durable-write.js";
import { createPathGuard } from "./fs-contain.js";
import { isErrno, nodeFsIo, toStoreError, withModes, type FsIo } from "./fs-io.js";
import { createFsLeaseStore } from "./fs-leases.js";
import { createLockManager } from "./fs-lock.js";
import { createHolderBook, type HolderBook } from "./lease-entry.js";
import { migrateLegacyLeases } from "./lease-legacy.js";
import { createLeaseEpoch } from "./lease-epoch.js";
import { createFsLogStore } from "./fs-logs.js";
import { storePaths, type StorePaths } from "./fs-paths.js";
import { createLogIndexCache } from "./log-index.js";
import { createBackgroundSync } from "./log-sync.js";

/** The on-disk layout version this code writes and reads. */
/**
 * The on-disk layout this code writes. Layout 1 kept leases in JSON files; layout 2 keeps each
 * in a directory whose one entry names its state (lease-entry.ts). Opening a layout-1 store
 * moves its leases over and marks it layout 2.
 */
export const STORE_LAYOUT = { format: "keel.fs-store", version: 2 } as const;

const CheckOptionsSchema = z.strictObject({ repair: z.boolean().optional() }).optional();

/** Creates `directory` and its missing ancestors (synchronously, at construction). */
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
  }
}

/** Writes the layout marker of this code's layout. */
function writeLayout(io: FsIo, paths: StorePaths): void {
  writeFileAtomicSync(io, paths.marker, Buffer.from(`${JSON.stringify(STORE_LAYOUT, null, 2)}\n`));
}

/**
 * Checks the layout marker, writing it on first use; a newer layout is refused (`unsupported`),
 * an older one upgraded (layout 1: its lease files become lease directories).
 */
function checkLayout(io: FsIo, paths: StorePaths, holders: HolderBook): void {
  let text: string | undefined;
  try {
    text = io.readFileSync(paths.marker).toString("utf8");
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
  }
  if (text === undefined) {
    writeLayout(io, paths);
    return;
  }
  let marker: { format?: unknown; version?: unknown } = {};
  try {
    marker = JSON.parse(text) as typeof marker;
  } catch {
    // handled below
  }
  if (marker.format !== STORE_LAYOUT.format || typeof marker.version !== "number") {
    throw new KeelError("corrupt", `${paths.marker} is not a Keel filesystem store marker; is ${paths.root} the right directory?`, {
      details: { location: paths.marker },
    });
  }
  if (marker.version > STORE_LAYOUT.version) {
    throw new KeelError("unsupported", `${paths.root} holds layout version ${marker.version}; this @keel/store-fs reads up to ${STORE_LAYOUT.version}: upgrade it`, {
      details: { location: paths.marker, version: marker.version, supported: STORE_LAYOUT.version },
    });
  }
  if (marker.version < STORE_LAYOUT.version) {
    migrateLegacyLeases(io, paths, (holder) => holders.codeSync(holder));
    writeLayout(io, paths);
  }
}

/**
 * Opens a filesystem store over an explicit {@link FsIo} (the real one by default). Tests pass a
 * faulty one; users call `createFsStore`.
 */
export function openFsStore(options: FsStoreOptions, io: FsIo = nodeFsIo): KeelStore {
  validateOrThrow(FsStoreOptionsSchema, options, "fs store options");
  io = withModes(io, { file: options.fileMode ?? 0o600, directory: options.directoryMode ?? 0o700 });
  let paths: StorePaths;
  try {
    const root = path.resolve(options.dir);
    makeDirectories(io, root);
    // The root as a real path: every path below it is then checked to have no link on the way.
    paths = storePaths(realpathSync.native(root));
  } catch (error) {
    throw toStoreError(error, `open the store directory ${options.dir}`);
  }
  const holders = createHolderBook(io, paths);
  try {
    makeDirectories(io, paths.locks);
    makeDirectories(io, paths.leases);
    checkLayout(io, paths, holders);
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
    waitMs: options.lockWaitMs ?? 10_000,
    warn,
  });
  const logIndex = createLogIndexCache(io, paths.logSidecar);
  const context: FsContext = {
    io,
    paths,
    clock: options.clock ?? systemClock,
    maxValueBytes,
    lockStaleMs,
    warn,
    logIndex,
    backgroundSync: createBackgroundSync(io, logIndex),
    docCache: createDocCache(),
    guard: createPathGuard(io, paths.root),
    locks,
    ownLeases: new Map(),
    leaseEntries: new Map(),
    holders,
    leaseEpoch: createLeaseEpoch({ io, paths, locks }),
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
      const parsed = validate(CheckOptionsSchema, checkOptions, "check options");
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("check the store", () => checkStore(context, parsed.value?.repair === true));
    },
    close: async () => {
      closed = true;
      while (inFlight > 0) await new Promise<void>((resolve) => idle.push(resolve));
      // Appends made with `durable: false` are synced before the store reports closed.
      await context.backgroundSync.flush();
    },
  };
}
