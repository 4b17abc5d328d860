import { updateDoc } from "@keel/store/kit";
import { expect, it, describe } from "vitest";
import { code, createStoreConformanceHarness, sleep, value, type StoreConformanceTarget } from "./store-conformance-harness.js";

/**
 * The document rules of DESIGN.md §3: store-assigned versions, compare-and-swap, explicit blind
 * writes, JSON and size checks before writing, tombstones, listing, concurrent writers.
 * Registers one `describe` block; {@link describeStoreConformance} calls it with the others.
 */
export function describeDocumentConformance(target: StoreConformanceTarget): void {
  describe(`store conformance: ${target.name}: documents`, () => {
    const { open, reopen, ttl } = createStoreConformanceHarness(target);
    it("assigns versions from 1, strictly increasing, and returns copies", async () => {
      const store = await open();
      const first = await value(store.docs.put(["missions", "m1"], { n: 1, list: [1] }, { create: true }));
      expect(first.version).toBe(1);
      expect(first.key).toEqual(["missions", "m1"]);
      const second = await value(store.docs.put(["missions", "m1"], { n: 2, list: [1] }, { expectedVersion: 1 }));
      expect(second.version).toBe(2);
      const third = await value(store.docs.put(["missions", "m1"], { n: 3, list: [1] }, { unconditional: true }));
      expect(third.version).toBe(3);
      const read = await value(store.docs.get(["missions", "m1"]));
      expect(read?.value).toEqual({ n: 3, list: [1] });
      expect(read?.version).toBe(3);
      expect(typeof read?.updatedAt).toBe("string");
      (read!.value as { list: number[] }).list.push(99);
      expect((await value(store.docs.get(["missions", "m1"])))?.value).toEqual({ n: 3, list: [1] });
      expect(await value(store.docs.get(["missions", "absent"]))).toBeUndefined();
    });

    it("gives a value back byte for byte: its key order, numbers and strings as written (from another handle too)", async () => {
      const store = await open();
      const written = { z: 1, a: { y: [3, { k: "é\u2028😀", b: -1.5e300, c: 0.1 }], b: null }, m: [{ q: true, p: "" }], "10": 2, "2": 1 };
      await value(store.docs.put(["ordered"], written, { create: true }));
      expect(JSON.stringify((await value(store.docs.get(["ordered"])))?.value)).toBe(JSON.stringify(written));
      if (target.reopen) {
        const other = await reopen(store);
        expect(JSON.stringify((await value(other.docs.get(["ordered"])))?.value)).toBe(JSON.stringify(written));
      }
    });

    it("refuses a stale version with conflict and changes nothing", async () => {
      const store = await open();
      await value(store.docs.put(["d"], { v: "a" }, { create: true }));
      await value(store.docs.put(["d"], { v: "b" }, { expectedVersion: 1 }));
      expect(await code(store.docs.put(["d"], { v: "stale" }, { expectedVersion: 1 }))).toBe("conflict");
      expect(await code(store.docs.put(["d"], { v: "future" }, { expectedVersion: 7 }))).toBe("conflict");
      expect(await code(store.docs.put(["d"], { v: "again" }, { create: true }))).toBe("conflict");
      expect(await code(store.docs.put(["none"], { v: 1 }, { expectedVersion: 1 }))).toBe("conflict");
      const read = await value(store.docs.get(["d"]));
      expect(read?.value).toEqual({ v: "b" });
      expect(read?.version).toBe(2);
      expect(await value(store.docs.get(["none"]))).toBeUndefined();
    });

    it("allows a blind write only when it says { unconditional: true }", async () => {
      const store = await open();
      for (const condition of [undefined, {}, { expectedVersion: 1, create: true }, { unconditional: false }, { expectedVersion: -1 }, { create: true, extra: 1 }]) {
        expect(await code(store.docs.put(["d"], { v: 1 }, condition as never))).toBe("invalid_input");
      }
      expect(await value(store.docs.get(["d"]))).toBeUndefined();
      expect((await value(store.docs.put(["d"], { v: 1 }, { unconditional: true }))).version).toBe(1);
    });

    it("rejects values that are not plain JSON and values over the size limit before writing", async () => {
      const store = await open();
      await value(store.docs.put(["d"], { keep: true }, { create: true }));
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      for (const bad of [undefined, Number.NaN, { a: Number.POSITIVE_INFINITY }, new Date(0), cyclic, { f: () => 1 }]) {
        expect(await code(store.docs.put(["d"], bad as never, { expectedVersion: 1 }))).toBe("invalid_input");
      }
      const huge = "x".repeat(store.capabilities.maxValueBytes + 10);
      expect(await code(store.docs.put(["d"], { huge }, { expectedVersion: 1 }))).toBe("too_large");
      expect(await code(store.docs.put(["big"], { huge }, { create: true }))).toBe("too_large");
      const read = await value(store.docs.get(["d"]));
      expect(read?.value).toEqual({ keep: true });
      expect(read?.version).toBe(1);
      expect(await value(store.docs.get(["big"]))).toBeUndefined();
    });

    it("leaves tombstones: a late writer with a stale version gets deleted, never resurrects", async () => {
      const store = await open();
      await value(store.docs.put(["t"], { v: 1 }, { create: true }));
      expect(await code(store.docs.delete(["t"], { expectedVersion: 9 }))).toBe("conflict");
      expect(await value(store.docs.delete(["t"], { expectedVersion: 1 }))).toBe(true);
      expect(await value(store.docs.get(["t"]))).toBeUndefined();
      expect(await code(store.docs.put(["t"], { v: "late" }, { expectedVersion: 1 }))).toBe("deleted");
      expect(await code(store.docs.delete(["t"], { expectedVersion: 1 }))).toBe("deleted");
      expect(await value(store.docs.get(["t"]))).toBeUndefined();
      expect(await value(store.docs.delete(["t"], { unconditional: true }))).toBe(false);
      expect(await value(store.docs.delete(["never"], { unconditional: true }))).toBe(false);
      expect(await code(store.docs.delete(["never"], { expectedVersion: 1 }))).toBe("conflict");
      const reborn = await value(store.docs.put(["t"], { v: "new" }, { create: true }));
      expect(reborn.version).toBeGreaterThan(1);
      expect(await code(store.docs.put(["t"], { v: "late" }, { expectedVersion: 1 }))).toBe("conflict");
      expect((await value(store.docs.list([]))).items.map((item) => item.key)).toEqual([["t"]]);
    });

    it("lists by prefix in key order, a page at a time, without tombstones", async () => {
      const store = await open();
      const keys = [
        ["m", "b"],
        ["m", "a", "deep"],
        ["m", "c"],
        ["m", "a"],
        ["n", "x"],
        ["m2", "y"],
      ];
      for (const key of keys) await value(store.docs.put(key, { key: key.join("/") }, { create: true }));
      await value(store.docs.delete(["m", "c"], { unconditional: true }));
      const all = await value(store.docs.list(["m"]));
      expect(all.items.map((item) => item.key)).toEqual([["m", "a"], ["m", "a", "deep"], ["m", "b"]]);
      expect(all.next).toBeUndefined();
      expect(all.items.every((item) => item.version === 1 && item.bytes > 0)).toBe(true);
      const seen: string[][] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await value(store.docs.list([], after === undefined ? { limit: 2 } : { limit: 2, after }));
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((item) => item.key));
        if (!page.next) break;
        after = page.next;
      }
      expect(seen).toEqual([["m", "a"], ["m", "a", "deep"], ["m", "b"], ["m2", "y"], ["n", "x"]]);
      expect(await code(store.docs.list(["m"], { limit: 0 }))).toBe("invalid_input");
    });

    it("lets exactly one of many concurrent writers with the same expected version win", async () => {
      const store = await open();
      await value(store.docs.put(["race"], { winner: null }, { create: true }));
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, (_, index) => store.docs.put(["race"], { winner: index, pad: "p".repeat(500 + index) }, { expectedVersion: 1 })),
      );
      const winners = outcomes.flatMap((outcome, index) => (outcome.isOk() ? [index] : []));
      expect(winners).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome.isErr()).every((outcome) => outcome.isErr() && outcome.error.code === "conflict")).toBe(true);
      const read = await value(store.docs.get(["race"]));
      expect(read?.version).toBe(2);
      expect((read?.value as { winner: number }).winner).toBe(winners[0]);
    });

    it("loses no update under concurrent read-modify-write (updateDoc)", async () => {
      const store = await open();
      await Promise.all(
        Array.from({ length: 25 }, () =>
          value(updateDoc<{ count: number }>(store.docs, ["counter"], (current) => ({ count: (current?.value.count ?? 0) + 1 }), { retries: 100 })),
        ),
      );
      expect((await value(store.docs.get(["counter"])))?.value).toEqual({ count: 25 });
    });
  });
}
