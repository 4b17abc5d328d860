import { describeStoreConformance } from "@keel/testkit/store";
import { afterAll, describe, it } from "vitest";
import { startTransactionPooler } from "../test-support/pgbouncer.js";
import { describeWithPostgres, dropSchema, freshSchemaName } from "../test-support/postgres-test-database.js";
import { createPostgresStore, type PostgresStore } from "./index.js";

// The whole contract through a real PgBouncer in transaction mode: consecutive transactions of
// one store land on different server connections, so any session state would break a test.
const bouncer = await startTransactionPooler();

describeWithPostgres("postgres store behind PgBouncer (transaction pooling)", () => {
  if (typeof bouncer === "string") {
    console.warn(`[keel] skipping the PgBouncer conformance run: ${bouncer}`);
    describe.skip(`conformance behind PgBouncer (skipped: ${bouncer})`, () => {
      it("runs the conformance suite through PgBouncer", () => undefined);
    });
    return;
  }
  afterAll(() => bouncer.stop());
  describeStoreConformance({
    name: "postgres via pgbouncer",
    batchWrites: true,
    pageReads: true,
    lockedUpdates: true,
    // Lease-expiry tests need every call inside the TTL: a loaded database server is slower than a file.
    shortTtlMs: 500,
    create: async () => createPostgresStore({ connectionString: bouncer.url, schema: freshSchemaName(), poolSize: 3 }),
    reopen: async (store) => createPostgresStore({ connectionString: bouncer.url, schema: (store as PostgresStore).schema, poolSize: 3 }),
    destroy: async (store) => dropSchema((store as PostgresStore).schema),
  });
});
