import { expect, it, describe } from "vitest";
import { code, createStoreConformanceHarness, sleep, value, type StoreConformanceTarget } from "./store-conformance-harness.js";

/**
 * The log rules of DESIGN.md §3: dense seqs in order, idempotent ids, `expectedSeq`, bursts of
 * concurrent appends, validation before writing, tombstones, listing.
 * Registers one `describe` block; {@link describeStoreConformance} calls it with the others.
 */
export function describeLogConformance(target: StoreConformanceTarget): void {
  describe(`store conformance: ${target.name}: logs`, () => {
    const { open, ttl } = createStoreConformanceHarness(target);
    it("assigns dense seqs in order and reads them back in seq order", async () => {
      const store = await open();
      const first = await value(store.logs.append(["journal", "r1"], [{ id: "a", value: 1 }, { id: "b", value: { x: [2] } }]));
      expect(first).toEqual({ lastSeq: 2, appended: 2, deduplicated: 0 });
      const second = await value(store.logs.append(["journal", "r1"], [{ id: "c", value: "three" }]));
      expect(second.lastSeq).toBe(3);
      const records = await value(store.logs.read(["journal", "r1"]));
      expect(records.map((record) => [record.seq, record.id, record.value])).toEqual([
        [1, "a", 1],
        [2, "b", { x: [2] }],
        [3, "c", "three"],
      ]);
      expect(records.every((record) => typeof record.at === "string")).toBe(true);
      expect((await value(store.logs.read(["journal", "r1"], { afterSeq: 1, limit: 1 }))).map((record) => record.id)).toEqual(["b"]);
      expect(await value(store.logs.head(["journal", "r1"]))).toEqual({ lastSeq: 3 });
      expect(await value(store.logs.head(["journal", "none"]))).toBeUndefined();
      expect(await value(store.logs.read(["journal", "none"]))).toEqual([]);
    });

    it("makes re-appending the same id idempotent and a different value a conflict that appends nothing", async () => {
      const store = await open();
      await value(store.logs.append(["l"], [{ id: "a", value: { n: 1 } }]));
      const again = await value(store.logs.append(["l"], [{ id: "a", value: { n: 1 } }, { id: "b", value: 2 }]));
      expect(again).toEqual({ lastSeq: 2, appended: 1, deduplicated: 1 });
      expect(await code(store.logs.append(["l"], [{ id: "c", value: 3 }, { id: "a", value: { n: "other" } }]))).toBe("conflict");
      expect(await code(store.logs.append(["l"], [{ id: "d", value: 1 }, { id: "d", value: 2 }]))).toBe("conflict");
      const records = await value(store.logs.read(["l"]));
      expect(records.map((record) => record.id)).toEqual(["a", "b"]);
      expect(await value(store.logs.head(["l"]))).toEqual({ lastSeq: 2 });
    });

    it("gives records back byte for byte, and dedupes a retry whose keys come in another order", async () => {
      const store = await open();
      const written = { role: "assistant", content: [{ type: "tool-call", input: { path: "b.ts", line: 2, all: false } }], usage: { output: 7, input: 1.25e-7 } };
      const reordered = { usage: { input: 1.25e-7, output: 7 }, content: [{ input: { all: false, line: 2, path: "b.ts" }, type: "tool-call" }], role: "assistant" };
      await value(store.logs.append(["ordered"], [{ id: "m1", value: written }]));
      expect(await value(store.logs.append(["ordered"], [{ id: "m1", value: reordered }]))).toEqual({ lastSeq: 1, appended: 0, deduplicated: 1 });
      expect(await value(store.logs.append(["ordered"], [{ id: "m2", value: reordered }, { id: "m2", value: written }]))).toEqual({ lastSeq: 2, appended: 1, deduplicated: 0 });
      const records = await value(store.logs.read(["ordered"]));
      expect(records.map((record) => JSON.stringify(record.value))).toEqual([JSON.stringify(written), JSON.stringify(reordered)]);
    });

    it("checks expectedSeq", async () => {
      const store = await open();
      await value(store.logs.append(["l"], [{ id: "a", value: 1 }], { expectedSeq: 0 }));
      expect(await code(store.logs.append(["l"], [{ id: "b", value: 2 }], { expectedSeq: 0 }))).toBe("conflict");
      await value(store.logs.append(["l"], [{ id: "b", value: 2 }], { expectedSeq: 1 }));
      expect((await value(store.logs.read(["l"]))).map((record) => record.id)).toEqual(["a", "b"]);
    });

    it("takes durable: false (a buffered append) under the same rules: seqs, dedupe, expectedSeq, validation", async () => {
      const store = await open();
      expect(typeof (store.capabilities.bufferedAppends ?? false)).toBe("boolean");
      expect(await value(store.logs.append(["buffered"], [{ id: "a", value: 1 }], { durable: false }))).toEqual({ lastSeq: 1, appended: 1, deduplicated: 0 });
      expect(await value(store.logs.append(["buffered"], [{ id: "b", value: 2 }], { durable: true }))).toEqual({ lastSeq: 2, appended: 1, deduplicated: 0 });
      expect(await value(store.logs.append(["buffered"], [{ id: "a", value: 1 }, { id: "c", value: 3 }], { durable: false }))).toEqual({ lastSeq: 3, appended: 1, deduplicated: 1 });
      expect(await code(store.logs.append(["buffered"], [{ id: "a", value: "other" }], { durable: false }))).toBe("conflict");
      expect(await code(store.logs.append(["buffered"], [{ id: "d", value: 4 }], { durable: false, expectedSeq: 2 }))).toBe("conflict");
      expect(await value(store.logs.append(["buffered"], [{ id: "d", value: 4 }], { durable: false, expectedSeq: 3 }))).toEqual({ lastSeq: 4, appended: 1, deduplicated: 0 });
      expect(await code(store.logs.append(["buffered"], [{ id: "e", value: 5 }], { durable: "no" } as never))).toBe("invalid_input");
      // Concurrent buffered and durable appends stay dense and contiguous.
      await Promise.all(Array.from({ length: 10 }, (_, index) => value(store.logs.append(["buffered"], [{ id: `x${index}`, value: index }], { durable: index % 2 === 0 }))));
      const records = await value(store.logs.read(["buffered"]));
      expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 14 }, (_, index) => index + 1));
      expect(records.slice(0, 4).map((record) => [record.id, record.value])).toEqual([["a", 1], ["b", 2], ["c", 3], ["d", 4]]);
      expect(await value(store.logs.head(["buffered"]))).toEqual({ lastSeq: 14 });
    });

    it("keeps order and contiguity under bursts of concurrent appends", async () => {
      const store = await open();
      await Promise.all(
        Array.from({ length: 20 }, (_, batch) =>
          value(store.logs.append(["burst"], Array.from({ length: 25 }, (_, index) => ({ id: `${batch}-${index}`, value: { batch, index } })))),
        ),
      );
      const records = await value(store.logs.read(["burst"]));
      expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 500 }, (_, index) => index + 1));
      for (let start = 0; start < 500; start += 25) {
        const batch = (records[start]!.value as { batch: number }).batch;
        expect(records.slice(start, start + 25).map((record) => record.value)).toEqual(
          Array.from({ length: 25 }, (_, index) => ({ batch, index })),
        );
      }
    });

    it("rejects bad records before writing anything", async () => {
      const store = await open();
      const huge = "x".repeat(store.capabilities.maxValueBytes + 10);
      expect(await code(store.logs.append(["l"], [{ id: "ok", value: 1 }, { id: "big", value: huge }]))).toBe("too_large");
      for (const bad of [[{ id: "", value: 1 }], [{ id: "x\n", value: 1 }], [{ value: 1 }], [{ id: "a", value: undefined }], [{ id: "a", value: 1, extra: 2 }], "no", [null]]) {
        expect(await code(store.logs.append(["l"], bad as never))).toBe("invalid_input");
      }
      expect(await code(store.logs.append(["l"], [{ id: "a", value: 1 }], { expectedSeq: -1 }))).toBe("invalid_input");
      expect(await code(store.logs.read(["l"], { afterSeq: -1 }))).toBe("invalid_input");
      expect(await value(store.logs.head(["l"]))).toBeUndefined();
    });

    it("deletes with a tombstone: seqs are never reused and stale expectations fail", async () => {
      const store = await open();
      await value(store.logs.append(["l"], [{ id: "a", value: 1 }, { id: "b", value: 2 }]));
      expect(await value(store.logs.delete(["l"]))).toBe(true);
      expect(await value(store.logs.delete(["l"]))).toBe(false);
      expect(await value(store.logs.head(["l"]))).toBeUndefined();
      expect(await value(store.logs.read(["l"]))).toEqual([]);
      expect(await code(store.logs.append(["l"], [{ id: "c", value: 3 }], { expectedSeq: 2 }))).toBe("deleted");
      const reborn = await value(store.logs.append(["l"], [{ id: "a", value: "new life" }]));
      expect(reborn.lastSeq).toBeGreaterThan(2);
      const records = await value(store.logs.read(["l"]));
      expect(records.map((record) => record.value)).toEqual(["new life"]);
      expect(records[0]!.seq).toBeGreaterThan(2);
    });

    it("lists logs by prefix in key order", async () => {
      const store = await open();
      for (const key of [["runs", "b"], ["runs", "a"], ["other", "x"], ["runs", "a", "sub"]]) {
        await value(store.logs.append(key, [{ id: "1", value: 1 }]));
      }
      await value(store.logs.delete(["runs", "b"]));
      expect(await value(store.logs.list(["runs"]))).toEqual([["runs", "a"], ["runs", "a", "sub"]]);
    });
  });
}
