import type { Clock, KeelError } from "@keel/core";
import type { ResultAsync } from "neverthrow";
import type { FsStoreWarning } from "../fs-store-options.js";
import type { PathGuard } from "./fs-contain.js";
import type { FsIo } from "./fs-io.js";
import type { DocCache } from "./doc-cache.js";
import type { LockManager } from "./fs-lock.js";
import type { HolderBook, LeaseEntry } from "./lease-entry.js";
import type { LeaseEpoch } from "./lease-epoch.js";
import type { LogIndexCache } from "./log-index.js";
import type { BackgroundSync } from "./log-sync.js";
import type { StorePaths } from "./fs-paths.js";

/** What the parts of one filesystem store share. */
export interface FsContext {
  io: FsIo;
  paths: StorePaths;
  clock: Clock;
  maxValueBytes: number;
  lockStaleMs: number;
  /**
   * True for a store opened with `create: false`: its reads (`get`, `list`, log `read`, `head`
   * and `list`, lease `current`, `check()` without repair) write nothing at all — no lock token,
   * no lock directory, no id sidecar, no boot record. Its writes work as with `create: true`.
   */
  quietReads: boolean;
  locks: LockManager;
  /**
   * The leases this store instance acquired or renewed and has not released: name → token.
   * A document write fenced by one of them may check its fence without the lease's
   * cross-process lock (see `holdFence` in fs-leases.ts).
   */
  ownLeases: Map<string, number>;
  /** The entry of each lease this instance last saw or wrote (see lease-entry.ts), tried before listing. */
  leaseEntries: Map<string, LeaseEntry>;
  /** Holder codes of lease entries. */
  holders: HolderBook;
  /** The boot epoch of lease tokens (see lease-epoch.ts). */
  leaseEpoch: LeaseEpoch;
  logIndex: LogIndexCache;
  /** Syncs, a little later, the logs appended to with `durable: false`. */
  backgroundSync: BackgroundSync;
  /** Verified decodings of recently seen document files, keyed by their exact bytes. */
  docCache: DocCache;
  /** Keeps paths inside the root (no symbolic link on the way). */
  guard: PathGuard;
  warn: (warning: FsStoreWarning) => void;
  /**
   * Runs one store operation: refused with `unavailable` once the store is closed, tracked so
   * that `close()` waits for it, and anything thrown mapped to a `KeelError`.
   */
  operation: <T>(name: string, work: () => Promise<T> | T) => ResultAsync<T, KeelError>;
}

/** The token floor of this boot, loaded at the first use (a durable write once per boot). */
export function leaseFloor(context: FsContext): number | Promise<number> {
  return context.leaseEpoch.known() ?? context.leaseEpoch.floor();
}

/** The token floor for a read: {@link leaseFloor}, or without writing the boot record for {@link FsContext.quietReads}. */
export function leaseReadFloor(context: FsContext): number | Promise<number> {
  return context.quietReads ? context.leaseEpoch.readFloor() : leaseFloor(context);
}

/** The store's clock as an ISO 8601 timestamp. */
export function isoNow(context: FsContext): string {
  return new Date(context.clock.now()).toISOString();
}
