import path from "node:path";
import { KeelError, systemClock, validate, validateOrThrow } from "@keel/core";
import { DEFAULT_MAX_VALUE_BYTES, type KeelStore } from "@keel/store";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { FsStoreOptionsSchema, type FsStoreOptions, type FsStoreWarning } from "../fs-store-options.js";
import { checkStore } from "./fs-check.js";
import type { FsContext } from "./fs-context.js";
import { createFsDocStore } from "./fs-docs.js";
import { isErrno, nodeFsIo, toStoreError, writeAll, type FsIo } from "./fs-io.js";
import { createFsLeaseStore } from "./fs-leases.js";
import { createLockManager } from "./fs-lock.js";
import { createFsLogStore } from "./fs-logs.js";
import { storePaths, temporaryPath, type StorePaths } from "./fs-paths.js";
import { createLogIndexCache } from "./log-index.js";

/** The on-disk layout version this code writes and reads. */
export const STORE_LAYOUT = { format: "keel.fs-store", version: 1 } as const;

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

/** Checks the layout marker, writing it on first use; a newer layout is refused (`unsupported`). */
function checkLayout(io: FsIo, paths: StorePaths): void {
  let text: string | undefined;
  try {
    text = io.readFileSync(paths.marker).toString("utf8");
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
  }
  if (text === undefined) {
    const staging = temporaryPath(paths.marker);
    const fd = io.openSync(staging, "wx");
    try {
      writeAll(io, fd, Buffer.from(`${JSON.stringify(STORE_LAYOUT, null, 2)}\n`), 0);
    } finally {
      io.closeSync(fd);
    }
    io.renameSync(staging, paths.marker);
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
}

/**
 * Opens a filesystem store over an explicit {@link FsIo} (the real one by default). Tests pass a
 * faulty one; users call `createFsStore`.
 */
export function openFsStore(options: FsStoreOptions, io: FsIo = nodeFsIo): KeelStore {
  validateOrThrow(FsStoreOptionsSchema, options, "fs store options");
  const paths = storePaths(path.resolve(options.dir));
  try {
    makeDirectories(io, paths.root);
    makeDirectories(io, paths.locks);
    makeDirectories(io, paths.leases);
    checkLayout(io, paths);
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
  const inFlight = new Set<Promise<void>>();
  let closed = false;

  const context: FsContext = {
    io,
    paths,
    clock: options.clock ?? systemClock,
    maxValueBytes,
    lockStaleMs,
    warn,
    logIndex: createLogIndexCache(io),
    locks: createLockManager({
      io,
      directory: paths.locks,
      directoryOf: paths.lockDirectory,
      staleMs: lockStaleMs,
      waitMs: options.lockWaitMs ?? 10_000,
      warn,
    }),
    operation: (name, work) => {
      if (closed) return errAsync(new KeelError("unavailable", `the fs store at ${paths.root} is closed`, { retryable: false }));
      const result = ResultAsync.fromThrowable(async () => work(), (error) => toStoreError(error, name))();
      const settled = Promise.resolve(result).then(() => undefined);
      inFlight.add(settled);
      void settled.then(() => inFlight.delete(settled));
      return result;
    },
  };

  return {
    capabilities: { scope: "host", durability: "fsync", maxValueBytes },
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
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
