import type { Pool } from "pg";
import { z } from "zod";

/** Options of {@link createPostgresStore}: a connection string or a pool of your own. */
export interface PostgresStoreOptions {
  /**
   * A connection string: a URL (`postgres://user@host:5432/db`, `postgresql://…`,
   * `socket:/var/run/postgresql?db=keel`) or a socket directory (`/var/run/postgresql keel`), as
   * `pg` reads them. No control characters; at most 8,192 characters. The store makes and ends
   * its own pool.
   */
  connectionString?: string;
  /** A `pg` pool the host already runs; the store uses it and leaves it open at `close()`. */
  pool?: Pool;
  /**
   * The PostgreSQL schema holding Keel's tables (default `keel`): lower-case letters, digits and
   * `_`, at most 63 characters; not a system schema (`information_schema`, `pg_catalog`,
   * `pg_toast`, any `pg_*`). Every table name is qualified with it: no `search_path` is set.
   */
  schema?: string;
  /**
   * `true` (default): a missing schema, or one without Keel's tables, is created and migrated.
   * `false`: use only a Keel store that is already there: a missing schema, or one that holds no
   * Keel store, is `not_found` at the first operation and nothing is created (what reading tools
   * such as `keel inspect` use, with `migrate: false`).
   */
  create?: boolean;
  /** Connections of the store's own pool (1 to 100, default 4). */
  poolSize?: number;
  /** Run the schema migrations before the first operation (default true). With false, a schema that is not current is refused. */
  migrate?: boolean;
  /** The largest value in bytes of JSON text (a document, or one log record). Default 1 MiB, at most PostgreSQL's 1 GiB field limit. */
  maxValueBytes?: number;
  /**
   * The longest a write waits for a row (or lease) another transaction holds locked, in ms
   * (PostgreSQL's `lock_timeout`, set with `SET LOCAL` in every transaction of the store; default
   * 20,000; 0: no limit). A write that waits longer ends `unavailable` (retryable), having written
   * nothing. It bounds waits on holders the idle timeout does not end (another tool's session, a
   * slow statement) and on a queue of many hosts on one row; a frozen Keel host is ended sooner,
   * by its own `idleInTransactionTimeoutMs`, and the waiters then go on.
   */
  lockTimeoutMs?: number;
  /**
   * The longest one statement of the store runs, lock waits included, in ms (`statement_timeout`,
   * `SET LOCAL` per transaction; default 30,000; 0: no limit). Longer is `unavailable` (retryable).
   */
  statementTimeoutMs?: number;
  /**
   * The longest a transaction of the store may sit idle between its statements, in ms
   * (`idle_in_transaction_session_timeout`, `SET LOCAL` per transaction; default 10,000; 0: no
   * limit). Past it the server ends the session: a host stopped inside a transaction (SIGSTOP, a
   * long GC pause, a hung VM) has it rolled back and its locks released, and sees `unavailable`
   * (retryable) when it resumes.
   */
  idleInTransactionTimeoutMs?: number;
}

/** The defaults of the per-transaction timeouts (see {@link PostgresStoreOptions}), in ms. */
export const DEFAULT_POSTGRES_TIMEOUTS = { lockTimeoutMs: 20_000, statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 10_000 } as const;

/** PostgreSQL's largest timeout setting in ms (an `int`). */
const MAX_TIMEOUT_MS = 2_147_483_647;

const MAX_CONNECTION_STRING_LENGTH = 8192;

/** PostgreSQL's largest field value (1 GiB): no text value can be longer. */
const MAX_FIELD_BYTES = 1024 * 1024 * 1024;

/** The schemas PostgreSQL keeps for itself: the catalog, the standard's views, TOAST and temporary schemas (all `pg_*`). */
function isSystemSchema(schema: string): boolean {
  return schema === "information_schema" || schema.startsWith("pg_");
}

/**
 * A connection string `pg` reads as meant: a URL with its scheme, or a socket directory. Any
 * other text `pg` would read as a URL relative to `postgres://base` (host `base`), not as an error.
 */
function isConnectionString(text: string): boolean {
  return /^(postgres|postgresql|socket):/i.test(text) || text.startsWith("/");
}

/** A timeout option: whole ms, 0 (no limit) up to PostgreSQL's largest. */
function timeoutMs(name: string) {
  return z
    .number()
    .int(`${name} must be a whole number of milliseconds`)
    .min(0, `${name} must be 0 (no limit) or more milliseconds`)
    .max(MAX_TIMEOUT_MS, `${name} must be at most ${MAX_TIMEOUT_MS} ms (PostgreSQL's limit)`)
    .optional();
}

/** The zod schema of {@link PostgresStoreOptions}. */
export const PostgresStoreOptionsSchema: z.ZodType = z
  .strictObject({
    connectionString: z
      .string()
      .min(1, "connectionString must not be empty")
      .max(MAX_CONNECTION_STRING_LENGTH, `connectionString must be at most ${MAX_CONNECTION_STRING_LENGTH} characters`)
      // eslint-disable-next-line no-control-regex
      .regex(/^[^\u0000-\u001f\u007f]+$/, "connectionString must not contain NUL or other control characters")
      .refine(isConnectionString, "connectionString must be a postgres://, postgresql:// or socket: URL, or a socket directory (/var/run/postgresql)")
      .optional(),
    pool: z.custom<Pool>((value) => typeof (value as Pool | undefined)?.connect === "function" && typeof (value as Pool).query === "function", "pool must be a pg Pool").optional(),
    schema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, "schema must be lower-case letters, digits and '_' (at most 63), starting with a letter or '_'")
      .refine((schema) => !isSystemSchema(schema), "schema must not be a PostgreSQL system schema (information_schema, pg_catalog, pg_toast or any pg_*): pick a schema of your own, such as keel")
      .optional(),
    create: z.boolean().optional(),
    poolSize: z.number().int().min(1).max(100).optional(),
    migrate: z.boolean().optional(),
    maxValueBytes: z.number().int().positive().max(MAX_FIELD_BYTES).optional(),
    lockTimeoutMs: timeoutMs("lockTimeoutMs"),
    statementTimeoutMs: timeoutMs("statementTimeoutMs"),
    idleInTransactionTimeoutMs: timeoutMs("idleInTransactionTimeoutMs"),
  })
  .refine((options) => (options.connectionString === undefined) !== (options.pool === undefined), "give exactly one of connectionString or pool");
