import { KeelError, systemClock, validateOrThrow } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { DEFAULT_MAX_VALUE_BYTES, validateCheckOptions } from "@keel/store/kit";
import Database from "better-sqlite3";
import { errAsync, ok, type ResultAsync } from "neverthrow";
import { SqliteStoreOptionsSchema, type SqliteStoreOptions } from "./sqlite-store-options.js";
import { checkSqlite } from "./internal/sqlite-check.js";
import { checkDatabasePath } from "./internal/sqlite-file.js";
import { readStep, toStoreError, type SqliteContext } from "./internal/sqlite-context.js";
import { createSqliteDocs } from "./internal/sqlite-docs.js";
import { createSqliteLeases } from "./internal/sqlite-leases.js";
import { createSqliteLogs } from "./internal/sqlite-logs.js";
import { migrateSqlite, newerSchema, readSchemaVersion, SQLITE_SCHEMA_VERSION, type SqliteMigration } from "./internal/sqlite-schema.js";

/** The longest SQLite busy wait that blocks the thread, once the store is open. */
const SYNCHRONOUS_BUSY_WAIT_MS = 20;

/** The `not_found` of a file that holds no Keel store, opened with `create: false`. */
function notAStore(file: string): KeelError {
  return new KeelError("not_found", `no Keel store in the SQLite file ${file} (it has no keel_schema table): nothing was changed`, { details: { file } });
}

/** The `unsupported` of a file whose schema is not current, opened with `migrate: false`. */
function unmigrated(file: string, found: number): KeelError {
  return new KeelError("unsupported", `the SQLite store ${file} has schema version ${found}, not ${SQLITE_SCHEMA_VERSION}: open it with migrate: true or call migrate()`, {
    details: { file, found, supported: SQLITE_SCHEMA_VERSION },
    retryable: false,
  });
}

/** A SQLite store: a {@link KeelStore} with its file and its migrations. */
export interface SqliteStore extends KeelStore {
  /** The database file. */
  readonly file: string;
  /**
   * Brings the schema to the version this adapter writes (idempotent; concurrent callers take
   * turns under SQLite's write lock). A newer schema is `unsupported`, left untouched.
   */
  migrate(): ResultAsync<SqliteMigration, KeelError>;
}

/**
 * Creates the SQLite store (better-sqlite3 12): one database file shared safely by many
 * processes of one host.
 *
 * - WAL journal, so readers never wait for the writer; `synchronous = FULL` by default (every
 *   commit fsynced: durability `fsync`).
 * - Every write is one `BEGIN IMMEDIATE` transaction, synchronous from begin to commit (no
 *   `await` inside), with the fence check, the version or seq decision and the write together.
 *   A busy database is waited for (SQLite's busy timeout, then retries off the event loop);
 *   past `busyTimeoutMs` the caller gets `unavailable` (retryable), never `SQLITE_BUSY`.
 * - A versioned schema (`keel_schema`), migrated at open unless `migrate: false`; a file with a
 *   newer schema is refused with `unsupported`.
 * - Values are stored as JSON text in the writer's key order, so they read back byte for byte.
 *
 * Capabilities: scope `host`. Throws a `KeelError` at once, before anything is created, for bad
 * options or a path that is not a database file (`invalid_input`), a missing directory, or with
 * `create: false` a missing file or one without a Keel store (`not_found`); then for a file that
 * cannot be opened (`io_failed`, `corrupt`) or a newer schema (`unsupported`).
 *
 * @example
 * ```ts
 * const store = createSqliteStore({ file: ".keel/keel.db" });
 * await store.docs.put(["missions", "m1"], { objective: "ship" }, { create: true });
 * await store.close();
 * ```
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  validateOrThrow(SqliteStoreOptionsSchema, options, "SQLite store options");
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  const synchronous = options.synchronous ?? "full";
  const create = options.create !== false;
  const existed = checkDatabasePath(options.file, create);
  // Without migrations a new file could only be refused (it has no schema): refuse it uncreated.
  if (!existed && options.migrate === false) throw unmigrated(options.file, 0);
  let opened: Database.Database | undefined;
  try {
    opened = new Database(options.file, { timeout: busyTimeoutMs, fileMustExist: !create });
    const db = opened;
    if (options.migrate === false || !create) {
      // Judged before the journal mode is set: a file refused here is left exactly as it was.
      const found = readSchemaVersion(db);
      if (found === 0 && !create) throw notAStore(options.file);
      if (found > SQLITE_SCHEMA_VERSION) throw newerSchema(options.file, found);
      if (found < SQLITE_SCHEMA_VERSION && options.migrate === false) throw unmigrated(options.file, found);
    }
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`);
    if (options.migrate !== false) migrateSqlite(db, options.file);
  } catch (error) {
    opened?.close();
    throw toStoreError(error, options.file, "opening the SQLite store");
  }
  const db = opened;
  // After open, SQLite's own (thread-blocking) busy wait stays short: longer waits are retried
  // off the event loop, so one process's other work, and other handles in it, go on meanwhile.
  db.pragma(`busy_timeout = ${Math.min(busyTimeoutMs, SYNCHRONOUS_BUSY_WAIT_MS)}`);
  const context: SqliteContext = {
    db,
    file: options.file,
    clock: options.clock ?? systemClock,
    maxValueBytes: options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES,
    busyTimeoutMs,
    closed: false,
  };
  return {
    file: options.file,
    capabilities: {
      scope: "host",
      durability: synchronous === "full" ? "fsync" : "memory",
      maxValueBytes: context.maxValueBytes,
      batchWrites: true,
      pageReads: true,
    },
    docs: createSqliteDocs(context),
    logs: createSqliteLogs(context),
    leases: createSqliteLeases(context),
    // `repair` has nothing to do here: SQLite keeps no backups or quarantine to mend from.
    check: (options) => {
      const parsed = validateCheckOptions(options);
      return parsed.isErr() ? errAsync(parsed.error) : readStep(context, "checking the store", () => checkSqlite(context));
    },
    migrate: () => readStep(context, "migrating the schema", () => ok(migrateSqlite(db, options.file))),
    close: async () => {
      if (context.closed) return;
      context.closed = true;
      db.close();
    },
  };
}
