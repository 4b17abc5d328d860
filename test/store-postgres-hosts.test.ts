import { createBudget } from "@keel/budget";
import { createPostgresStore } from "@keel/store-postgres";
import { expect, it } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";
import { startWorker } from "./support/store-fs-child.js";

const TURNS = 10;
const LIMIT = 24;

describeWithPostgres("@keel/store-postgres as many hosts on one database", () => {
  it("runs 8 processes' role turns on overlapping missions with one budget: no lost update, never overspent, dense seqs", async () => {
    const schema = freshSchemaName();
    const store = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 2 });
    try {
      // Migrate once up front, as a deployment would, so the workers race on turns, not on setup.
      (await store.migrate())._unsafeUnwrap();
      const workers = Array.from({ length: 8 }, (_, index) => startWorker("test/support/store-postgres-turn-worker.ts", [testPostgresUrl, schema, String(index), String(TURNS), String(LIMIT)]));
      try {
        await Promise.all(workers.map((worker) => worker.waitFor(/^loaded$/)));
        for (const worker of workers) worker.child.stdin!.write("go\n");
        const exits = await Promise.all(workers.map((worker) => worker.exited));
        workers.forEach((worker, index) => expect(exits[index]!.code, worker.stderr()).toBe(0));
      } finally {
        for (const worker of workers) worker.child.kill("SIGKILL");
      }
      const lines = workers.flatMap((worker) => worker.lines);
      const budget = createBudget({ store });
      for (const missionId of ["shared-0", "shared-1"]) {
        const succeeded = lines.filter((line) => line.startsWith(`turn ${missionId} `)).length;
        const refused = lines.filter((line) => line === `refused ${missionId}`).length;
        expect(succeeded + refused).toBe(4 * TURNS);
        // 40 asks for 24 calls: exactly the limit ran, the rest were refused before running.
        expect(succeeded).toBe(LIMIT);
        const snapshot = (await budget.scope(`mission.${missionId}`, { limits: { calls: LIMIT } }).snapshot())._unsafeUnwrap();
        expect(snapshot.settled.calls).toBe(succeeded);
        expect(snapshot.reserved.calls).toBe(0);
      }
      const records = (await store.logs.read(["shared", "turns"]))._unsafeUnwrap();
      expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 2 * LIMIT }, (_, index) => index + 1));
      expect(new Set(records.map((record) => record.id)).size).toBe(2 * LIMIT);
      expect((await store.check())._unsafeUnwrap()).toEqual({ ok: true, repaired: [], problems: [] });
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  }, 240_000);

  it("fails every fenced write of a process whose lease was taken over while it was stopped, and changes nothing", async () => {
    const schema = freshSchemaName();
    const store = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 2 });
    const zombie = startWorker("test/support/store-postgres-zombie-worker.ts", [testPostgresUrl, schema]);
    try {
      const held = Number((await zombie.waitFor(/^holding /)).split(" ")[1]);
      zombie.child.kill("SIGSTOP");
      await new Promise((resolve) => setTimeout(resolve, 600));
      const successor = (await store.leases.acquire("zombie.lease", "successor", { ttlMs: 30_000, waitMs: 5_000 }))._unsafeUnwrap();
      expect(successor.token).toBeGreaterThan(held);
      zombie.child.kill("SIGCONT");
      zombie.child.stdin!.write("go\n");
      await zombie.waitFor(/^done$/);
      const results = zombie.lines.filter((line) => line.startsWith("result "));
      expect(results).toEqual([
        "result docs.put lease_lost",
        "result docs.put-new lease_lost",
        "result docs.delete lease_lost",
        "result logs.append lease_lost",
        "result logs.delete lease_lost",
        "result leases.renew lease_lost",
      ]);
      expect((await store.docs.get(["guarded", "doc"]))._unsafeUnwrap()).toMatchObject({ value: { by: "zombie" }, version: 1 });
      expect((await store.docs.get(["guarded", "other"]))._unsafeUnwrap()).toBeUndefined();
      expect((await store.logs.read(["guarded", "log"]))._unsafeUnwrap().map((record) => record.id)).toEqual(["z0"]);
      expect((await store.leases.current("zombie.lease"))._unsafeUnwrap()?.holder).toBe("successor");
    } finally {
      zombie.child.kill("SIGKILL");
      await store.close();
      await dropSchema(schema);
    }
  }, 60_000);
});
