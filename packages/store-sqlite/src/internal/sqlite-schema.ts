import { KeelError } from "@keel/core";
import type { Database } from "better-sqlite3";

/**
 * The schema this version of the adapter writes. Version 1:
 * - `keel_schema(id = 1, version)`: the schema version (a table, not `PRAGMA user_version`, so
 *   the file can hold an application's own tables and their own versioning);
 * - `keel_docs(key, version, deleted, value, bytes, updated_at)`: one row per key, tombstones
 *   kept (`deleted = 1`, `value` NULL) so a late writer with a stale version fails;
 * - `keel_logs(key, last_seq, deleted)` and `keel_log_records(log, seq, id, value, at)`, primary
 *   key `(log, seq)`, unique `(log, id)`;
 * - `keel_leases(name, holder, token, expires_at)`: a released lease keeps its token with `expires_at` 0.
 *
 * Keys are their segments joined by U+001F, which sorts below every character a safe name may
 * hold, so `ORDER BY key` is the port's segment-by-segment order. Values are JSON text in the writer's key order.
 */
export const SQLITE_SCHEMA_VERSION = 1;

const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE IF NOT EXISTS keel_docs (key TEXT PRIMARY KEY, version INTEGER NOT NULL, deleted INTEGER NOT NULL,
       value TEXT, bytes INTEGER NOT NULL, updated_at TEXT NOT NULL) WITHOUT ROWID`,
    `CREATE TABLE IF NOT EXISTS keel_logs (key TEXT PRIMARY KEY, last_seq INTEGER NOT NULL, deleted INTEGER NOT NULL) WITHOUT ROWID`,
    `CREATE TABLE IF NOT EXISTS keel_log_records (log TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL,
       at TEXT NOT NULL, PRIMARY KEY (log, seq), UNIQUE (log, id)) WITHOUT ROWID`,
    `CREATE TABLE IF NOT EXISTS keel_leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, token INTEGER NOT NULL,
       expires_at INTEGER NOT NULL) WITHOUT ROWID`,
  ],
];

/** What a migration of the SQLite schema did: the version found and the version now. */
export interface SqliteMigration {
  /** The schema version found (0: none). */
  from: number;
  /** The schema version after the migration. */
  to: number;
}

/** The schema version recorded in the file (0 when Keel never wrote it). */
export function readSchemaVersion(db: Database): number {
  const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'keel_schema'").get();
  if (!table) return 0;
  const row = db.prepare("SELECT version FROM keel_schema WHERE id = 1").get() as { version: number } | undefined;
  return row?.version ?? 0;
}

/** The error of a file whose schema is newer than this adapter. */
export function newerSchema(file: string, found: number): KeelError {
  return new KeelError(
    "unsupported",
    `the SQLite store ${file} has schema version ${found}, newer than the ${SQLITE_SCHEMA_VERSION} this @keel/store-sqlite knows: upgrade @keel/store-sqlite before opening it`,
    { details: { file, found, supported: SQLITE_SCHEMA_VERSION }, retryable: false },
  );
}

/**
 * Brings the file's schema to {@link SQLITE_SCHEMA_VERSION} in one `BEGIN IMMEDIATE`
 * transaction: the write lock makes concurrent migrators take turns, the second finds the work
 * done. Every statement is idempotent (`IF NOT EXISTS`), so a half-applied earlier run re-runs
 * safely. A newer schema is refused, untouched. Synchronous: throws a `KeelError`.
 */
export function migrateSqlite(db: Database, file: string): SqliteMigration {
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec("CREATE TABLE IF NOT EXISTS keel_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)");
    const from = readSchemaVersion(db);
    if (from > SQLITE_SCHEMA_VERSION) throw newerSchema(file, from);
    for (let version = from; version < SQLITE_SCHEMA_VERSION; version++) {
      for (const statement of MIGRATIONS[version]!) db.exec(statement);
    }
    db.prepare("INSERT INTO keel_schema (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version").run(SQLITE_SCHEMA_VERSION);
    db.exec("COMMIT");
    return { from, to: SQLITE_SCHEMA_VERSION };
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
