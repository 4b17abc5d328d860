/**
 * Opens the store a multi-process worker was pointed at: `fs <dir>`, `sqlite <file>` or
 * `postgres <connection string> <schema>`. Shared by the workers of the multi-process tests
 * (test/store-fs-multiprocess.test.ts, test/store-sql-multiprocess.test.ts).
 */
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";

/** The kinds of store a worker can open. */
export type WorkerStoreKind = "fs" | "sqlite" | "postgres";

/** Opens a store of `kind` at `location` (a directory, a file or a connection string); waits on locks for up to a minute. */
export function openWorkerStore(kind: string, location: string, schema: string | undefined): KeelStore {
  if (kind === "fs") return createFsStore({ dir: location, lockWaitMs: 60_000 });
  if (kind === "sqlite") return createSqliteStore({ file: location, busyTimeoutMs: 60_000 });
  if (kind === "postgres" && schema) return createPostgresStore({ connectionString: location, schema, poolSize: 2 });
  throw new Error(`unknown store kind ${kind}`);
}
