import type { Clock } from "@keel/core";
import { MAX_DURATION_MS } from "@keel/store/kit";
import { z } from "zod";

/**
 * Something the filesystem store noticed and handled on its own, reported through
 * {@link FsStoreOptions.onWarning}:
 * - `served-backup`: a document file was corrupt or missing and its `.bak` was served instead
 *   (`check({ repair: true })` restores the file from it); the version went back to the
 *   backup's, and the next write continues above every version acknowledged before;
 * - `quarantined`: a damaged document's bytes were moved into `_keel/quarantine/` (by a write
 *   over the damaged key, or by `check({ repair: true })`);
 * - `truncated-tail`: a torn last log batch (a crash mid-write, never acknowledged) was cut off
 *   before the next append;
 * - `took-over-stale-lock`: a lock whose holder died (or that was older than `lockStaleMs`) was
 *   taken over;
 * - `lock-lost`: this process held a lock longer than `lockStaleMs` and another process took it
 *   over (raise `lockStaleMs`, or find what stalled the process);
 * - `lock-release-failed`: a lock could not be released after an operation (it will be judged
 *   stale later);
 * - `rewrote-marker`: the layout marker `_keel/store.json` was empty or torn (what a power cut
 *   leaves of one written by a version that did not fsync it) and was written again when the
 *   store was opened.
 */
export interface FsStoreWarning {
  type: "served-backup" | "quarantined" | "truncated-tail" | "took-over-stale-lock" | "lock-lost" | "lock-release-failed" | "rewrote-marker";
  /** The file concerned. */
  location: string;
  message: string;
}

/** Options of {@link createFsStore}. */
export interface FsStoreOptions {
  /**
   * The store's directory; created when missing, unless `create: false`. Every process sharing a
   * store opens the same one.
   */
  dir: string;
  /**
   * `true` (default): a missing directory is created, and so are the store's internal
   * directories and its layout marker `_keel/store.json`; a torn marker is written again and an
   * older layout upgraded.
   * `false`: open only a Keel store that is already there, and change nothing on disk when
   * opening: a missing directory, or one without the marker, is `not_found` and nothing is
   * created (what reading tools such as `keel inspect` use). A store that opening would mend is
   * refused instead, also with nothing changed: an empty or torn marker is `corrupt`, an older
   * layout `unsupported` (open it once with `create: true` to rewrite or upgrade it). Errors
   * are thrown at construction, like every other open error. Once open, reads write nothing
   * either: `docs.get`/`list`, `logs.read`/`head`/`list`, `leases.current` and `check()` without
   * repair take no lock (no token renamed, no lock directory made), save no id sidecar, write no
   * boot record and cut no torn tail (a read skips it, `check()` reports it), so a read-only
   * directory can be read. `check()` then reads a log without its lock: it reports a torn tail
   * only once no live writer holds the lock and a second scan finds the same one (an append in
   * flight never does), and is `unavailable` when a writer keeps the lock of a log with a tail
   * past `lockWaitMs`.
   * Writes (`put`, `delete`, `append`, lease changes, `check({ repair: true })`) work as with
   * `create: true`, locks and sidecars included.
   */
  create?: boolean;
  /**
   * The store's clock, for lease expiry and timestamps. Default the system clock. Processes
   * sharing a directory must share the clock too (the system clock of this host).
   */
  clock?: Clock;
  /** The largest value in bytes of JSON text (a document, or one log record). Default 1 MiB. */
  maxValueBytes?: number;
  /**
   * A lock older than this is stale and may be taken over even if its holder still runs
   * (a hung process). A lock whose holder process on this host is gone is stale at once.
   * Default 10,000 ms; keep it far above the longest single write.
   */
  lockStaleMs?: number;
  /** How long an operation waits for a key locked by another process before `unavailable`. Default 10,000 ms. */
  lockWaitMs?: number;
  /**
   * Permission bits of the files the store creates. Default `0o600` (owner only): capsules,
   * handoffs, ledgers and logs hold model output and repository paths. `0o640` or `0o644` share
   * them; the process umask still applies.
   */
  fileMode?: number;
  /** Permission bits of the directories the store creates. Default `0o700` (owner only). */
  directoryMode?: number;
  /** Called for each {@link FsStoreWarning}; a throwing listener is ignored. */
  onWarning?: (warning: FsStoreWarning) => void;
}

/** The zod schema of {@link FsStoreOptions}. */
export const FsStoreOptionsSchema = z.strictObject({
  dir: z.string().min(1, "dir must be a directory path"),
  create: z.boolean().optional(),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
  maxValueBytes: z.number().int().positive().optional(),
  lockStaleMs: z.number().int().min(100).max(MAX_DURATION_MS).optional(),
  lockWaitMs: z.number().int().nonnegative().max(MAX_DURATION_MS).optional(),
  fileMode: z.number().int().min(0).max(0o777).optional(),
  directoryMode: z.number().int().min(0).max(0o777).optional(),
  onWarning: z.custom<(warning: FsStoreWarning) => void>((value) => typeof value === "function", "onWarning must be a function").optional(),
});
