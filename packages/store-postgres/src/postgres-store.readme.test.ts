import { expect, it } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../test-support/postgres-test-database.js";
import { createPostgresStore } from "./index.js";

describeWithPostgres("the README", () => {
  it("runs the README example", async () => {
    const schema = freshSchemaName();
    try {
      // --- the README example, with the test server and a fresh schema ---
      const store = createPostgresStore({ connectionString: testPostgresUrl, schema });
      await store.migrate(); // optional: the first operation migrates too
      const lease = await store.leases.acquire("mission.m1", "host-a", { ttlMs: 30_000 });
      if (lease.isOk()) {
        const fence = { lease: lease.value.name, token: lease.value.token };
        await store.docs.put(["missions", "m1"], { objective: "ship" }, { create: true, fence });
        await store.logs.append(["missions", "m1", "journal"], [{ id: "call-0", value: { ok: true } }], { fence });
        await store.leases.release(lease.value);
      }
      // --- end of the example (close comes after the assertions) ---
      expect(lease.isOk()).toBe(true);
      expect((await store.docs.get(["missions", "m1"]))._unsafeUnwrap()?.value).toEqual({ objective: "ship" });
      expect((await store.logs.head(["missions", "m1", "journal"]))._unsafeUnwrap()).toEqual({ lastSeq: 1 });
      expect((await store.leases.current("mission.m1"))._unsafeUnwrap()).toBeUndefined();
      await store.close();
    } finally {
      await dropSchema(schema);
    }
  });
});
