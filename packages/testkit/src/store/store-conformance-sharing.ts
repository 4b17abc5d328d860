import { updateDoc } from "@keel/store/kit";
import { describe, expect, it } from "vitest";
import { code, createStoreConformanceHarness, sleep, value, type StoreConformanceTarget } from "./store-conformance-harness.js";

/**
 * The rules between two handles on the same data (what two processes see): writes of one are
 * read by the other, compare-and-swap and leases hold across them, and a lease taken over
 * through one fails the other's fenced writes. Needs {@link StoreConformanceTarget.reopen};
 * a store whose scope is one process has no such handles and does not run it.
 * Registers one `describe` block; {@link describeStoreConformance} calls it with the others.
 */
export function describeSharingConformance(target: StoreConformanceTarget): void {
  describe(`store conformance: ${target.name}: sharing between handles`, () => {
    const { open, reopen, ttl } = createStoreConformanceHarness(target);
    it("declares a scope wider than one process", async () => {
      const store = await open();
      expect(["host", "cluster"]).toContain(store.capabilities.scope);
    });

    it("shows each handle's writes to the other and keeps versions and seqs in one sequence", async () => {
      const left = await open();
      const right = await reopen(left);
      await value(left.docs.put(["d"], { by: "left" }, { create: true }));
      expect((await value(right.docs.get(["d"])))?.value).toEqual({ by: "left" });
      expect(await code(right.docs.put(["d"], { by: "right" }, { create: true }))).toBe("conflict");
      expect((await value(right.docs.put(["d"], { by: "right" }, { expectedVersion: 1 }))).version).toBe(2);
      expect(await code(left.docs.put(["d"], { by: "stale" }, { expectedVersion: 1 }))).toBe("conflict");
      await value(left.logs.append(["l"], [{ id: "a", value: 1 }]));
      await value(right.logs.append(["l"], [{ id: "a", value: 1 }, { id: "b", value: 2 }]));
      expect((await value(left.logs.read(["l"]))).map((record) => [record.seq, record.id])).toEqual([[1, "a"], [2, "b"]]);
      await value(right.docs.delete(["d"], { expectedVersion: 2 }));
      expect(await value(left.docs.get(["d"]))).toBeUndefined();
      expect(await code(left.docs.put(["d"], { by: "late" }, { expectedVersion: 2 }))).toBe("deleted");
    });

    it("shows a buffered append (durable: false) to the other handle at once, deduplicated there as any append", async () => {
      const left = await open();
      const right = await reopen(left);
      await value(left.logs.append(["buffered"], [{ id: "a", value: { n: 1 } }], { durable: false }));
      expect((await value(right.logs.read(["buffered"]))).map((record) => [record.seq, record.id, record.value])).toEqual([[1, "a", { n: 1 }]]);
      expect(await value(right.logs.head(["buffered"]))).toEqual({ lastSeq: 1 });
      expect(await value(right.logs.append(["buffered"], [{ id: "a", value: { n: 1 } }], { durable: false }))).toEqual({ lastSeq: 1, appended: 0, deduplicated: 1 });
      expect(await code(right.logs.append(["buffered"], [{ id: "a", value: { n: 2 } }]))).toBe("conflict");
      await value(right.logs.append(["buffered"], [{ id: "b", value: 2 }], { durable: false, expectedSeq: 1 }));
      expect((await value(left.logs.read(["buffered"]))).map((record) => record.id)).toEqual(["a", "b"]);
    });

    it("loses no update when both handles read-modify-write one document at once", async () => {
      const left = await open();
      const right = await reopen(left);
      const bump = (store: typeof left) =>
        value(updateDoc<{ count: number }>(store.docs, ["counter"], (current) => ({ count: (current?.value.count ?? 0) + 1 }), { retries: 200 }));
      await Promise.all(Array.from({ length: 40 }, (_, index) => bump(index % 2 === 0 ? left : right)));
      expect((await value(left.docs.get(["counter"])))?.value).toEqual({ count: 40 });
      expect((await value(right.docs.get(["counter"])))?.version).toBe(40);
    });

    it("keeps seqs dense when both handles append at once", async () => {
      const left = await open();
      const right = await reopen(left);
      await Promise.all(
        Array.from({ length: 20 }, (_, batch) =>
          value((batch % 2 === 0 ? left : right).logs.append(["burst"], Array.from({ length: 10 }, (_, index) => ({ id: `${batch}-${index}`, value: index })))),
        ),
      );
      const records = await value(right.logs.read(["burst"]));
      expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 200 }, (_, index) => index + 1));
      expect(new Set(records.map((record) => record.id)).size).toBe(200);
    });

    it("holds a lease against the other handle and fails the old holder's fence after a takeover", async () => {
      const left = await open();
      const right = await reopen(left);
      // The second handle's first call may do setup work (connect, check the schema): not inside the TTL.
      expect(await value(right.leases.current("shared"))).toBeUndefined();
      const held = await value(left.leases.acquire("shared", "left", { ttlMs: ttl }));
      expect(await code(right.leases.acquire("shared", "right", { ttlMs: 10_000 }))).toBe("lease_held");
      expect((await value(right.leases.current("shared")))?.holder).toBe("left");
      const fence = { lease: held.name, token: held.token };
      await value(left.docs.put(["guarded"], { by: "left" }, { create: true, fence }));
      await sleep(ttl * 2 + 20);
      const taken = await value(right.leases.acquire("shared", "right", { ttlMs: 10_000 }));
      expect(taken.token).toBeGreaterThan(held.token);
      expect(await code(left.leases.renew(held))).toBe("lease_lost");
      expect(await code(left.docs.put(["guarded"], { by: "zombie" }, { expectedVersion: 1, fence }))).toBe("lease_lost");
      expect(await code(left.logs.append(["guarded-log"], [{ id: "z", value: 1 }], { fence }))).toBe("lease_lost");
      expect((await value(right.docs.get(["guarded"])))?.value).toEqual({ by: "left" });
      expect(await value(right.logs.head(["guarded-log"]))).toBeUndefined();
    });
  });
}
