import { describeStoreConformance } from "@keel/testkit/store";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../test-support/postgres-test-database.js";
import { createPostgresStore, type PostgresStore } from "./index.js";

describeWithPostgres("postgres store", () => {
  describeStoreConformance({
    name: "postgres",
    batchWrites: true,
    pageReads: true,
    lockedUpdates: true,
    // Lease-expiry tests need every call inside the TTL: a loaded database server is slower than a file.
    shortTtlMs: 500,
    create: async () => createPostgresStore({ connectionString: testPostgresUrl, schema: freshSchemaName(), poolSize: 3 }),
    // A second pool on the same schema is what another process (or host) opens.
    reopen: async (store) => createPostgresStore({ connectionString: testPostgresUrl, schema: (store as PostgresStore).schema, poolSize: 3 }),
    destroy: async (store) => dropSchema((store as PostgresStore).schema),
  });
});
