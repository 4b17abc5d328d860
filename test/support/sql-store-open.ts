/**
 * Opens the SQL store a multi-process worker was pointed at: `sqlite <file>` or
 * `postgres <connection string> <schema>`. Shared by the workers of test/store-sql-*.test.ts.
 */
import type { KeelStore } from "@keel/store";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";

export function openSqlStore(kind: string, location: string, schema: string | undefined): KeelStore {
  if (kind === "sqlite") return createSqliteStore({ file: location, busyTimeoutMs: 60_000 });
  if (kind === "postgres" && schema) return createPostgresStore({ connectionString: location, schema, poolSize: 2 });
  throw new Error(`unknown store kind ${kind}`);
}
