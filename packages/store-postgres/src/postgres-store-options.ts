import type { Pool } from "pg";
import { z } from "zod";

/** Options of {@link createPostgresStore}: a connection string or a pool of your own. */
export interface PostgresStoreOptions {
  /** A libpq connection string (`postgres://user@host:5432/db`). The store makes and ends its own pool. */
  connectionString?: string;
  /** A `pg` pool the host already runs; the store uses it and leaves it open at `close()`. */
  pool?: Pool;
  /**
   * The PostgreSQL schema holding Keel's tables (default `keel`): lower-case letters, digits and
   * `_`, at most 63 characters. Every table name is qualified with it: no `search_path` is set.
   */
  schema?: string;
  /** Connections of the store's own pool (default 4). */
  poolSize?: number;
  /** Run the schema migrations before the first operation (default true). With false, a schema that is not current is refused. */
  migrate?: boolean;
  /** The largest value in bytes of JSON text (a document, or one log record). Default 1 MiB. */
  maxValueBytes?: number;
}

/** The zod schema of {@link PostgresStoreOptions}. */
export const PostgresStoreOptionsSchema: z.ZodType = z
  .strictObject({
    connectionString: z.string().min(1).optional(),
    pool: z.custom<Pool>((value) => typeof (value as Pool | undefined)?.connect === "function" && typeof (value as Pool).query === "function", "pool must be a pg Pool").optional(),
    schema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, "schema must be lower-case letters, digits and '_' (at most 63), starting with a letter or '_'")
      .optional(),
    poolSize: z.number().int().min(1).max(100).optional(),
    migrate: z.boolean().optional(),
    maxValueBytes: z.number().int().positive().optional(),
  })
  .refine((options) => (options.connectionString === undefined) !== (options.pool === undefined), "give exactly one of connectionString or pool");
