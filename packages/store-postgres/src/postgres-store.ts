import { KeelError, validateOrThrow } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { DEFAULT_MAX_VALUE_BYTES, validateCheckOptions } from "@keel/store/kit";
import { err, errAsync, ok, ResultAsync, type Result } from "neverthrow";
import pg from "pg";
import { DEFAULT_POSTGRES_TIMEOUTS, PostgresStoreOptionsSchema, type PostgresStoreOptions } from "./postgres-store-options.js";
import { checkPostgres } from "./internal/postgres-check.js";
import { beginStatement, closedError, read, tablesOf, toStoreError, type PostgresContext, type PostgresTimeouts } from "./internal/postgres-context.js";
import { createPostgresDocs } from "./internal/postgres-docs.js";
import { createPostgresLeases } from "./internal/postgres-leases.js";
import { createPostgresLogs } from "./internal/postgres-logs.js";
import { migratePostgres, newerSchema, POSTGRES_SCHEMA_VERSION, readPostgresSchemaVersion, type PostgresMigration } from "./internal/postgres-schema.js";

/** The `not_found` of a schema that is missing or holds no Keel store, opened with `create: false`. */
async function missingStore(pool: pg.Pool, schema: string): Promise<KeelError> {
  const exists = (await pool.query<{ present: boolean }>("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS present", [schema])).rows[0]?.present === true;
  const why = exists ? "holds no Keel store (no keel_schema table)" : "does not exist";
  return new KeelError("not_found", `the PostgreSQL schema "${schema}" ${why}: nothing was created`, { details: { schema, schemaExists: exists } });
}

/** A PostgreSQL store: a {@link KeelStore} with its schema and its migrations. */
export interface PostgresStore extends KeelStore {
  /** The PostgreSQL schema holding the store's tables. */
  readonly schema: string;
  /**
   * Brings the schema to the version this adapter writes, in one transaction under a
   * transaction-scoped advisory lock (idempotent; concurrent callers take turns). A newer
   * schema is `unsupported`, left untouched.
   */
  migrate(): ResultAsync<PostgresMigration, KeelError>;
}

/**
 * Creates the PostgreSQL store (`pg` 8): many processes on many hosts sharing one database.
 *
 * - Documents carry a version column; every write is one transaction that locks the row
 *   (`FOR UPDATE`), decides with the shared rules and writes. Logs take turns on a head row; seq
 *   is per log, record ids unique per log.
 * - `docs.update` (capability `lockedUpdates`) decides on the row while it is locked, in the
 *   same transaction: writers of one hot document take turns without a retry loop.
 * - Leases are rows with a fencing token, expiry judged by the database clock
 *   (`clock_timestamp()`); a fenced write locks the lease row `FOR SHARE` in its own
 *   transaction, so a takeover waits for it, and a stale token is `lease_lost`.
 * - Every transaction is bounded (`SET LOCAL lock_timeout`, `statement_timeout`,
 *   `idle_in_transaction_session_timeout`; defaults 20 s, 30 s, 10 s): the server ends a transaction
 *   left idle (a host stopped inside it) and its waiters go on; a wait past the lock timeout is
 *   `unavailable` (retryable), nothing written.
 * - No session state (no session advisory locks, prepared statement names, session `SET` or
 *   `LISTEN`): safe behind a transaction-mode pooler such as PgBouncer.
 * - `migrate()` runs before the first operation (unless `migrate: false`); a newer schema is
 *   refused with `unsupported`. A lost connection is `unavailable` (retryable); the server has
 *   rolled back whatever the transaction had done.
 * - Values are JSON `text` (not `jsonb`, which reorders keys) in the writer's key order, so they read back byte for byte.
 *
 * Capabilities: scope `cluster`, durability `fsync` (PostgreSQL's commit). Throws a
 * `KeelError` (`invalid_input`) at once for bad options (a system schema among them); connecting
 * happens on first use, where `create: false` answers `not_found` for a missing store.
 *
 * @example
 * ```ts
 * const store = createPostgresStore({ connectionString: "postgres://postgres@127.0.0.1:5432/test", schema: "keel" });
 * await store.docs.put(["missions", "m1"], { objective: "ship" }, { create: true });
 * await store.close();
 * ```
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  validateOrThrow(PostgresStoreOptionsSchema, options, "PostgreSQL store options");
  const schema = options.schema ?? "keel";
  const owned = options.pool === undefined;
  const pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: options.poolSize ?? 4 });
  // An idle client whose connection drops emits 'error' on the pool; without a listener that would crash the process.
  if (owned) pool.on("error", () => undefined);
  let readiness: Promise<Result<void, KeelError>> | undefined;
  const timeouts: PostgresTimeouts = {
    lockTimeoutMs: options.lockTimeoutMs ?? DEFAULT_POSTGRES_TIMEOUTS.lockTimeoutMs,
    statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_POSTGRES_TIMEOUTS.statementTimeoutMs,
    idleInTransactionTimeoutMs: options.idleInTransactionTimeoutMs ?? DEFAULT_POSTGRES_TIMEOUTS.idleInTransactionTimeoutMs,
  };
  const context: PostgresContext = {
    pool,
    tables: tablesOf(schema),
    maxValueBytes: options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES,
    timeouts,
    begin: beginStatement(timeouts),
    closed: false,
    ready: () => {
      readiness ??= prepare().then((outcome) => {
        // A transient failure (the server not up yet) is tried again by the next operation.
        // So is a missing store under `create: false`: another process may create it meanwhile.
        if (outcome.isErr() && (outcome.error.retryable || outcome.error.code === "not_found")) readiness = undefined;
        return outcome;
      });
      return readiness;
    },
  };
  const migrate = async (): Promise<Result<PostgresMigration, KeelError>> => {
    if (context.closed) return err(closedError(context));
    try {
      return ok(await migratePostgres(pool, schema, context.begin));
    } catch (error) {
      return err(toStoreError(error, context, `migrating schema ${schema}`));
    }
  };
  async function prepare(): Promise<Result<void, KeelError>> {
    if (options.create === false) {
      // Looked up before anything else runs: a missing store is refused with nothing created.
      try {
        if ((await readPostgresSchemaVersion(pool, schema)) === 0) return err(await missingStore(pool, schema));
      } catch (error) {
        return err(toStoreError(error, context, `looking up schema ${schema}`));
      }
    }
    if (options.migrate !== false) return (await migrate()).map(() => undefined);
    try {
      const found = await readPostgresSchemaVersion(pool, schema);
      if (found > POSTGRES_SCHEMA_VERSION) return err(newerSchema(schema, found));
      if (found < POSTGRES_SCHEMA_VERSION) {
        return err(
          new KeelError("unsupported", `the PostgreSQL schema "${schema}" has Keel schema version ${found}, not ${POSTGRES_SCHEMA_VERSION}: open it with migrate: true or call migrate()`, {
            details: { schema, found, supported: POSTGRES_SCHEMA_VERSION },
            retryable: false,
          }),
        );
      }
      return ok(undefined);
    } catch (error) {
      return err(toStoreError(error, context, `reading the schema version of ${schema}`));
    }
  }
  return {
    schema,
    capabilities: { scope: "cluster", durability: "fsync", maxValueBytes: context.maxValueBytes, batchWrites: true, pageReads: true, bufferedAppends: true, lockedUpdates: true },
    docs: createPostgresDocs(context),
    logs: createPostgresLogs(context),
    leases: createPostgresLeases(context),
    // `repair` has nothing to do here: PostgreSQL keeps no backups or quarantine of Keel's to mend from.
    check: (options) => {
      const parsed = validateCheckOptions(options);
      return parsed.isErr() ? errAsync(parsed.error) : read(context, "checking the store", (client) => checkPostgres(client, context));
    },
    migrate: () =>
      new ResultAsync(
        migrate().then((outcome) => {
          if (outcome.isOk()) readiness = Promise.resolve(ok(undefined));
          return outcome;
        }),
      ),
    close: async () => {
      if (context.closed) return;
      context.closed = true;
      if (owned) await pool.end();
    },
  };
}
