import type { BatchPut, KeelStore } from "@keel/store";
import { MAX_BATCH_WRITES } from "@keel/store/kit";
import { describe, expect, it } from "vitest";
import { describeLockedUpdateConformance } from "./store-conformance-updates.js";
import { code, createStoreConformanceHarness, value, type StoreConformanceTarget } from "./store-conformance-harness.js";

const batchOf = (store: KeelStore) => {
  if (!store.docs.batch) throw new Error("the store declares batchWrites but has no docs.batch");
  return store.docs.batch.bind(store.docs);
};
const pageOf = (store: KeelStore) => {
  if (!store.docs.readPage) throw new Error("the store declares pageReads but has no docs.readPage");
  return store.docs.readPage.bind(store.docs);
};

/**
 * The optional document operations of DESIGN.md §3: `docs.batch` (several conditional writes,
 * all or none), `docs.readPage` (a page of documents with their values) and `docs.update` (a
 * read-modify-write under the store's lock). The target declares which it has (`batchWrites`,
 * `pageReads`, `lockedUpdates`, default false); the store's capabilities must say the same, and
 * only declared operations are tested. Registers one `describe` block (two with `lockedUpdates`).
 */
export function describeBatchConformance(target: StoreConformanceTarget): void {
  describe(`store conformance: ${target.name}: batches and pages`, () => {
    const { open, ttl } = createStoreConformanceHarness(target);
    it("declares in its capabilities exactly the optional operations it has", async () => {
      const store = await open();
      expect(store.capabilities.batchWrites ?? false).toBe(target.batchWrites ?? false);
      expect(typeof store.docs.batch).toBe(target.batchWrites ? "function" : "undefined");
      expect(store.capabilities.pageReads ?? false).toBe(target.pageReads ?? false);
      expect(typeof store.docs.readPage).toBe(target.pageReads ? "function" : "undefined");
      expect(store.capabilities.lockedUpdates ?? false).toBe(target.lockedUpdates ?? false);
      expect(typeof store.docs.update).toBe(target.lockedUpdates ? "function" : "undefined");
    });

    if (target.batchWrites) {
      it("writes a batch, each under its own condition, and returns their versions in order", async () => {
        const store = await open();
        await value(store.docs.put(["b", "old"], { n: 1 }, { create: true }));
        await value(store.docs.put(["b", "any"], { n: 1 }, { create: true }));
        const written = await value(
          batchOf(store)([
            { key: ["b", "new"], value: { n: "new" }, condition: { create: true } },
            { key: ["b", "old"], value: { n: 2 }, condition: { expectedVersion: 1 } },
            { key: ["b", "any"], value: { n: 3 }, condition: { unconditional: true } },
          ]),
        );
        expect(written.map((doc) => [doc.key, doc.version])).toEqual([
          [["b", "new"], 1],
          [["b", "old"], 2],
          [["b", "any"], 2],
        ]);
        expect(typeof written[0]?.updatedAt).toBe("string");
        const read = await Promise.all(written.map(async (doc) => value(store.docs.get(doc.key))));
        expect(read.map((doc) => [doc?.value, doc?.version, doc?.updatedAt])).toEqual([
          [{ n: "new" }, 1, written[0]?.updatedAt],
          [{ n: 2 }, 2, written[1]?.updatedAt],
          [{ n: 3 }, 2, written[2]?.updatedAt],
        ]);
      });

      it("writes all or nothing: one refused condition fails the batch, naming the write", async () => {
        const store = await open();
        await value(store.docs.put(["b", "x"], { n: 1 }, { create: true }));
        await value(store.docs.put(["b", "x"], { n: 2 }, { expectedVersion: 1 }));
        await value(store.docs.put(["b", "gone"], { n: 1 }, { create: true }));
        await value(store.docs.delete(["b", "gone"], { expectedVersion: 1 }));
        const stale = await store.docs.batch!([
          { key: ["b", "fresh"], value: 1, condition: { create: true } },
          { key: ["b", "x"], value: { n: "stale" }, condition: { expectedVersion: 1 } },
        ]);
        expect(stale.isErr() && [stale.error.code, stale.error.details.index]).toEqual(["conflict", 1]);
        expect(await code(batchOf(store)([{ key: ["b", "fresh"], value: 1, condition: { create: true } }, { key: ["b", "x"], value: 1, condition: { create: true } }]))).toBe("conflict");
        expect(await code(batchOf(store)([{ key: ["b", "fresh"], value: 1, condition: { create: true } }, { key: ["b", "gone"], value: 1, condition: { expectedVersion: 1 } }]))).toBe("deleted");
        expect(await value(store.docs.get(["b", "fresh"]))).toBeUndefined();
        const kept = await value(store.docs.get(["b", "x"]));
        expect([kept?.value, kept?.version]).toEqual([{ n: 2 }, 2]);
      });

      it("refuses bad input before writing anything", async () => {
        const store = await open();
        const batch = batchOf(store);
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        const good = { key: ["b", "good"], value: 1, condition: { create: true } } satisfies BatchPut;
        const bad: unknown[] = [
          "not an array",
          [good, { ...good, value: 2 }],
          [good, { key: ["b", "c"], value: cyclic, condition: { create: true } }],
          [good, { key: ["b", "c"], value: 1 }],
          [good, { key: ["b", "c"], value: 1, condition: {} }],
          [good, { key: ["b", "c"], value: 1, condition: { create: true, fence: { lease: "l", token: 1 } } }],
          [good, { key: ["../up"], value: 1, condition: { create: true } }],
          [good, { key: ["b", "c"], condition: { create: true } }],
          Array.from({ length: MAX_BATCH_WRITES + 1 }, (_, index) => ({ key: ["b", `k${index}`], value: index, condition: { create: true } })),
        ];
        for (const writes of bad) expect(await code(batch(writes as never))).toBe("invalid_input");
        const big = { key: ["b", "big"], value: "x".repeat(store.capabilities.maxValueBytes + 1), condition: { create: true } } satisfies BatchPut;
        expect(await code(batch([good, big]))).toBe("too_large");
        expect((await value(store.docs.list(["b"]))).items).toEqual([]);
        expect(await value(batch([]))).toEqual([]);
        expect((await value(store.docs.list([]))).items).toEqual([]);
      });

      it("guards the whole batch with a fence", async () => {
        const store = await open();
        const first = await value(store.leases.acquire("writer", "a", { ttlMs: ttl }));
        const held = await value(batchOf(store)([{ key: ["f", "1"], value: 1, condition: { create: true } }], { fence: { lease: "writer", token: first.token } }));
        expect(held[0]?.version).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, ttl + 40));
        await value(store.leases.acquire("writer", "b", { ttlMs: 60_000 }));
        expect(await code(batchOf(store)([{ key: ["f", "2"], value: 2, condition: { create: true } }], { fence: { lease: "writer", token: first.token } }))).toBe("lease_lost");
        expect(await code(batchOf(store)([], { fence: { lease: "writer", token: first.token } }))).toBe("lease_lost");
        expect(await value(store.docs.get(["f", "2"]))).toBeUndefined();
      });

      it("lets exactly one of two racing batches win the same compare-and-swap", async () => {
        const store = await open();
        await value(store.docs.put(["race"], { n: 0 }, { create: true }));
        const outcomes = await Promise.all(
          ["a", "b", "c"].map(async (who) =>
            batchOf(store)([
              { key: ["race-side", who], value: who, condition: { create: true } },
              { key: ["race"], value: { n: who }, condition: { expectedVersion: 1 } },
            ]),
          ),
        );
        expect(outcomes.filter((outcome) => outcome.isOk())).toHaveLength(1);
        for (const outcome of outcomes) if (outcome.isErr()) expect(outcome.error.code).toBe("conflict");
        const winner = ((await value(store.docs.get(["race"])))?.value as { n: string }).n;
        expect((await value(store.docs.list(["race-side"]))).items.map((item) => item.key)).toEqual([["race-side", winner]]);
      });
      it("recreates a deleted key above its tombstone, and lets one of racing creators win", async () => {
        const store = await open();
        await value(store.docs.put(["t", "gone"], 1, { create: true }));
        await value(store.docs.delete(["t", "gone"], { expectedVersion: 1 }));
        const [recreated] = await value(batchOf(store)([{ key: ["t", "gone"], value: "again", condition: { create: true } }]));
        expect(recreated?.version).toBe(3);
        const outcomes = await Promise.all(["a", "b", "c"].map(async (who) => batchOf(store)([{ key: ["t", "new"], value: who, condition: { create: true } }])));
        expect(outcomes.filter((outcome) => outcome.isOk())).toHaveLength(1);
        for (const outcome of outcomes) if (outcome.isErr()) expect(outcome.error.code).toBe("conflict");
        expect((await value(store.docs.get(["t", "new"])))?.version).toBe(1);
      });
    }

    if (target.pageReads) {
      it("reads a page of documents with their values, as list pages them", async () => {
        const store = await open();
        for (const name of ["c", "a", "e", "b", "d"]) await value(store.docs.put(["p", name], { name }, { create: true }));
        await value(store.docs.put(["q", "other"], 1, { create: true }));
        await value(store.docs.put(["p", "b"], { name: "b", again: true }, { expectedVersion: 1 }));
        await value(store.docs.delete(["p", "d"], { unconditional: true }));
        const readPage = pageOf(store);
        const first = await value(readPage(["p"], { limit: 2 }));
        expect(first.items.map((doc) => [doc.key, doc.value, doc.version])).toEqual([
          [["p", "a"], { name: "a" }, 1],
          [["p", "b"], { name: "b", again: true }, 2],
        ]);
        expect(first.next).toBe((await value(store.docs.list(["p"], { limit: 2 }))).next);
        const rest = await value(readPage(["p"], { after: first.next!, limit: 10 }));
        expect(rest.items.map((doc) => doc.key)).toEqual([["p", "c"], ["p", "e"]]);
        expect(rest.next).toBeUndefined();
        expect(rest.damaged).toBeUndefined();
        (rest.items[0]!.value as { name: string }).name = "mutated";
        expect((await value(store.docs.get(["p", "c"])))?.value).toEqual({ name: "c" });
        expect((await value(readPage([]))).items).toHaveLength(5);
        expect(await code(readPage(["p"], { limit: 0 }))).toBe("invalid_input");
        expect(await code(readPage(["../p"]))).toBe("invalid_input");
      });
    }
  });
  if (target.lockedUpdates) describeLockedUpdateConformance(target);
}
