import type { Clock } from "@keel/core";
import { z } from "zod";

/** Options of {@link createSqliteStore}. */
export interface SqliteStoreOptions {
  /** The database file; created when missing. Every process sharing the store opens the same file (on a local disk, not a network share). */
  file: string;
  /**
   * `full` (default): every commit is fsynced, and the store reports durability `fsync`.
   * `normal`: WAL commits are fsynced only at checkpoints (faster; a committed write survives a
   * process crash but may be lost to a power cut or OS crash), and the store reports `memory`.
   */
  synchronous?: "full" | "normal";
  /**
   * How long a write waits for another connection's write transaction before `unavailable`
   * (SQLite's busy timeout, then retries off the event loop for as long again). Default 5,000 ms.
   */
  busyTimeoutMs?: number;
  /** Run the schema migrations at open (default true). With false, a file whose schema is not current is refused. */
  migrate?: boolean;
  /** The largest value in bytes of JSON text (a document, or one log record). Default 1 MiB. */
  maxValueBytes?: number;
  /**
   * The store's clock, for lease expiry and timestamps. Default the system clock. Processes
   * sharing a file share this host's clock.
   */
  clock?: Clock;
}

/** The zod schema of {@link SqliteStoreOptions}. */
export const SqliteStoreOptionsSchema: z.ZodType = z.strictObject({
  file: z.string().min(1, "file must be a database file path"),
  synchronous: z.enum(["full", "normal"]).optional(),
  busyTimeoutMs: z.number().int().nonnegative().optional(),
  migrate: z.boolean().optional(),
  maxValueBytes: z.number().int().positive().optional(),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
});
