import type { Clock, KeelError } from "@keel/core";
import type { ResultAsync } from "neverthrow";
import type { FsStoreWarning } from "../fs-store-options.js";
import type { FsIo } from "./fs-io.js";
import type { LockManager } from "./fs-lock.js";
import type { LogIndexCache } from "./log-index.js";
import type { StorePaths } from "./fs-paths.js";

/** What the parts of one filesystem store share. */
export interface FsContext {
  io: FsIo;
  paths: StorePaths;
  clock: Clock;
  maxValueBytes: number;
  lockStaleMs: number;
  locks: LockManager;
  logIndex: LogIndexCache;
  warn: (warning: FsStoreWarning) => void;
  /**
   * Runs one store operation: refused with `unavailable` once the store is closed, tracked so
   * that `close()` waits for it, and anything thrown mapped to a `KeelError`.
   */
  operation: <T>(name: string, work: () => Promise<T> | T) => ResultAsync<T, KeelError>;
}

/** The store's clock as an ISO 8601 timestamp. */
export function isoNow(context: FsContext): string {
  return new Date(context.clock.now()).toISOString();
}
