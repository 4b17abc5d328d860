/**
 * Opens the store a framework worker was pointed at: `fs <dir>`, `sqlite <file>` or
 * `postgres <connection string> <schema>`. Shared by the workers of test/framework-*.test.ts.
 */
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";

export function openFrameworkStore(kind: string, location: string, schema: string | undefined): KeelStore {
  if (kind === "fs") return createFsStore({ dir: location });
  if (kind === "sqlite") return createSqliteStore({ file: location, busyTimeoutMs: 60_000 });
  if (kind === "postgres" && schema) return createPostgresStore({ connectionString: location, schema, poolSize: 2 });
  throw new Error(`unknown store kind ${kind}`);
}
