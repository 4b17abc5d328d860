/**
 * The store a budget worker process opens, named on its command line: `fs:<dir>` (the filesystem
 * store), `postgres:<schema>` (the PostgreSQL test server, locked ledger updates) or
 * `postgres-cas:<schema>` (the same store with `docs.update` hidden, so the budget falls back to
 * its compare-and-swap loop: the path before locked updates).
 */
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createPostgresStore } from "@keel/store-postgres";

/** What a worker hands the budget, and how it closes it. */
export interface WorkerStore {
  store: KeelStore;
  close: () => Promise<void>;
}

/** Opens the store `spec` names (see the file's header). */
export function openWorkerStore(spec: string): WorkerStore {
  const colon = spec.indexOf(":");
  const kind = spec.slice(0, colon);
  const where = spec.slice(colon + 1);
  if (kind === "fs") {
    const store = createFsStore({ dir: where });
    return { store, close: () => store.close() };
  }
  // The test server of packages/store-postgres/test-support (not imported: it probes the server on load).
  const connectionString = process.env.KEEL_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const store = createPostgresStore({ connectionString, schema: where, poolSize: 2 });
  if (kind === "postgres") return { store, close: () => store.close() };
  if (kind !== "postgres-cas") throw new Error(`unknown store ${spec}: use fs:<dir>, postgres:<schema> or postgres-cas:<schema>`);
  const { update: _hidden, ...docs } = store.docs;
  const cas: KeelStore = { ...store, docs, capabilities: { ...store.capabilities, lockedUpdates: false }, check: store.check, close: store.close };
  return { store: cas, close: () => store.close() };
}
