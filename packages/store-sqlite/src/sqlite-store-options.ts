import type { Clock } from "@keel/core";
import { MAX_DURATION_MS } from "@keel/store/kit";
import { z } from "zod";

/** Options of {@link createSqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * The database file, on a local disk (not a network share); every process sharing the store
   * opens the same file. Its directory must exist (`not_found` otherwise: the store never creates
   * directories). The file is created when missing, unless `create: false`. A path that is a
   * symbolic link is followed once, as the user named it (like the filesystem store's root); a
   * link to nothing, or a path that is not a regular file (a directory, a FIFO, a device), is
   * refused (`invalid_input`). No NUL or other control character, no lone surrogate; at most
   * 4,096 characters.
   */
  file: string;
  /**
   * `true` (default): a missing file is created and a file without Keel's tables gets them.
   * `false`: open only a Keel store that is already there: a missing file, or a file that holds
   * no Keel store, is `not_found` and nothing is created (what reading tools such as
   * `keel inspect` use, with `migrate: false`).
   */
  create?: boolean;
  /**
   * `full` (default): every commit is fsynced, and the store reports durability `fsync`.
   * `normal`: WAL commits are fsynced only at checkpoints (faster; a committed write survives a
   * process crash but may be lost to a power cut or OS crash), and the store reports `memory`.
   */
  synchronous?: "full" | "normal";
  /**
   * How long a write waits for another connection's write transaction before `unavailable`
   * (SQLite's busy timeout, then retries off the event loop for as long again). Default 5,000 ms,
   * at most `MAX_DURATION_MS`.
   */
  busyTimeoutMs?: number;
  /**
   * Run the schema migrations at open (default true). With false, a file whose schema is not
   * current is refused and nothing is written to the file at open.
   */
  migrate?: boolean;
  /** The largest value in bytes of JSON text (a document, or one log record). Default 1 MiB, at most SQLite's 1,000,000,000. */
  maxValueBytes?: number;
  /**
   * The store's clock, for lease expiry and timestamps. Default the system clock. Processes
   * sharing a file share this host's clock.
   */
  clock?: Clock;
}

/** The longest file path accepted (Linux's `PATH_MAX`). */
const MAX_PATH_LENGTH = 4096;

/** SQLite's default `SQLITE_MAX_LENGTH`: no string or blob may be longer. */
const SQLITE_MAX_LENGTH = 1_000_000_000;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The zod schema of {@link SqliteStoreOptions}. */
export const SqliteStoreOptionsSchema: z.ZodType = z.strictObject({
  file: z
    .string()
    .min(1, "file must be a database file path")
    .max(MAX_PATH_LENGTH, `file must be at most ${MAX_PATH_LENGTH} characters`)
    // eslint-disable-next-line no-control-regex
    .regex(/^[^\u0000-\u001f\u007f]+$/, "file must not contain NUL or other control characters (a NUL would cut the path short and open another file)")
    // A lone surrogate: Node's fs reads it as U+FFFD, SQLite writes its raw bytes; the two would name different files.
    .refine((file) => !LONE_SURROGATE.test(file), "file must be well-formed Unicode (no lone surrogate)")
    .refine((file) => file !== ":memory:", "file must be a file: ':memory:' is not shared between connections (use createMemoryStore from @keel/store)"),
  create: z.boolean().optional(),
  synchronous: z.enum(["full", "normal"]).optional(),
  busyTimeoutMs: z.number().int().nonnegative().max(MAX_DURATION_MS).optional(),
  migrate: z.boolean().optional(),
  maxValueBytes: z.number().int().positive().max(SQLITE_MAX_LENGTH).optional(),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
});
