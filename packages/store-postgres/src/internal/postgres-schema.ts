import { KeelError } from "@keel/core";
import type { Pool } from "pg";
import { quoteIdentifier, tablesOf } from "./postgres-context.js";

/**
 * The schema this version of the adapter writes. Version 1, in the store's own PostgreSQL schema:
 * - `keel_schema(id = 1, version)`;
 * - `keel_docs(key, version, deleted, value, bytes, updated_at)`: one row per key, tombstones kept;
 * - `keel_logs(key, last_seq, deleted)` and `keel_log_records(log, seq, id, value, at)`,
 *   primary key `(log, seq)`, unique `(log, id)`;
 * - `keel_leases(name, holder, token, expires_at)`, times in epoch ms of the database clock.
 *
 * Keys are `text COLLATE "C"` (byte order, see encodeKeyText in @keel/store/kit); values are JSON
 * `text` in the writer's key order, not `jsonb` (which reorders keys and refuses `\u0000`), so
 * they read back byte for byte.
 */
export const POSTGRES_SCHEMA_VERSION = 1;

function migrations(schema: string): readonly (readonly string[])[] {
  const t = tablesOf(schema);
  return [
    [
      `CREATE TABLE IF NOT EXISTS ${t.docs} (key text COLLATE "C" PRIMARY KEY, version bigint NOT NULL, deleted boolean NOT NULL,
         value text, bytes integer NOT NULL, updated_at bigint NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ${t.logs} (key text COLLATE "C" PRIMARY KEY, last_seq bigint NOT NULL, deleted boolean NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ${t.records} (log text COLLATE "C" NOT NULL, seq bigint NOT NULL, id text NOT NULL, value text NOT NULL,
         at bigint NOT NULL, PRIMARY KEY (log, seq), UNIQUE (log, id))`,
      `CREATE TABLE IF NOT EXISTS ${t.leases} (name text COLLATE "C" PRIMARY KEY, holder text NOT NULL, token bigint NOT NULL, expires_at bigint NOT NULL)`,
    ],
  ];
}

/** What a migration of the PostgreSQL schema did: the version found and the version now. */
export interface PostgresMigration {
  /** The schema version found (0: none). */
  from: number;
  /** The schema version after the migration. */
  to: number;
}

/** The error of a schema newer than this adapter. */
export function newerSchema(schema: string, found: number): KeelError {
  return new KeelError(
    "unsupported",
    `the PostgreSQL schema "${schema}" has Keel schema version ${found}, newer than the ${POSTGRES_SCHEMA_VERSION} this @keel/store-postgres knows: upgrade @keel/store-postgres`,
    { details: { schema, found, supported: POSTGRES_SCHEMA_VERSION }, retryable: false },
  );
}

/** The recorded schema version (0 when Keel never migrated this schema). */
export async function readPostgresSchemaVersion(pool: Pool, schema: string): Promise<number> {
  const exists = await pool.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [`${quoteIdentifier(schema)}.keel_schema`]);
  if (!exists.rows[0]?.present) return 0;
  const row = await pool.query<{ version: number }>(`SELECT version FROM ${tablesOf(schema).meta} WHERE id = 1`);
  return row.rows[0]?.version ?? 0;
}

/**
 * Brings `schema` to {@link POSTGRES_SCHEMA_VERSION} in one transaction under
 * `pg_advisory_xact_lock` (a transaction-scoped lock: it ends with the transaction, so it is
 * safe behind a transaction-mode pooler and never strands). Concurrent migrators take turns; the
 * second finds the work done. Every statement is idempotent (`IF NOT EXISTS`) and none needs
 * `CONCURRENTLY`. A newer schema is refused, untouched. `begin` opens the transaction (the
 * store's, with its timeouts: a migrator waits on another no longer than `lock_timeout`).
 */
export async function migratePostgres(pool: Pool, schema: string, begin = "BEGIN"): Promise<PostgresMigration> {
  const client = await pool.connect();
  // A session the server ends between statements is reported by the next query, not as a crash.
  const ignore = () => undefined;
  client.on("error", ignore);
  let failure: unknown;
  try {
    await client.query(begin);
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`keel.migrate.${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    const t = tablesOf(schema);
    await client.query(`CREATE TABLE IF NOT EXISTS ${t.meta} (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)`);
    const found = (await client.query<{ version: number }>(`SELECT version FROM ${t.meta} WHERE id = 1`)).rows[0]?.version ?? 0;
    if (found > POSTGRES_SCHEMA_VERSION) throw newerSchema(schema, found);
    const steps = migrations(schema);
    for (let version = found; version < POSTGRES_SCHEMA_VERSION; version++) {
      for (const statement of steps[version]!) await client.query(statement);
    }
    await client.query(`INSERT INTO ${t.meta} (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = excluded.version`, [POSTGRES_SCHEMA_VERSION]);
    await client.query("COMMIT");
    return { from: found, to: POSTGRES_SCHEMA_VERSION };
  } catch (error) {
    failure = error;
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.off("error", ignore);
    client.release(failure instanceof Error && !KeelError.is(failure) ? failure : undefined);
  }
}
