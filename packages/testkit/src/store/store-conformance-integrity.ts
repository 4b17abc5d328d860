import { describe, expect, it } from "vitest";
import { code, createStoreConformanceHarness, value, type StoreConformanceTarget } from "./store-conformance-harness.js";

/** Keys that every adapter must refuse with `invalid_input`. */
const HOSTILE_KEYS: unknown[] = [
  [".."],
  ["a", ".."],
  ["."],
  ["a/b"],
  ["a\\b"],
  ["__proto__"],
  ["constructor", "__proto__"],
  [""],
  ["x".repeat(300)],
  ["a\u0000b"],
  ["a b"],
  [],
  "missions",
  [1],
  null,
  Array.from({ length: 17 }, () => "a"),
];

/**
 * The rules that hold across primitives: hostile keys refused everywhere, instances isolated,
 * the integrity check (`check()`, or `unsupported` for a target declared with `check: false`),
 * and `unavailable` after close.
 * Registers one `describe` block; {@link describeStoreConformance} calls it with the others.
 */
export function describeIntegrityConformance(target: StoreConformanceTarget): void {
  describe(`store conformance: ${target.name}: keys, instances and integrity`, () => {
    const { open } = createStoreConformanceHarness(target);
    it("rejects hostile keys at every entry point with invalid_input", async () => {
      const store = await open();
      for (const key of HOSTILE_KEYS) {
        const label = JSON.stringify(key);
        expect(await code(store.docs.put(key as never, 1, { unconditional: true })), label).toBe("invalid_input");
        expect(await code(store.docs.get(key as never)), label).toBe("invalid_input");
        expect(await code(store.docs.delete(key as never, { unconditional: true })), label).toBe("invalid_input");
        expect(await code(store.logs.append(key as never, [{ id: "a", value: 1 }])), label).toBe("invalid_input");
        expect(await code(store.logs.read(key as never)), label).toBe("invalid_input");
        expect(await code(store.logs.head(key as never)), label).toBe("invalid_input");
        if (Array.isArray(key) && key.length > 0) {
          expect(await code(store.docs.list(key as never)), label).toBe("invalid_input");
        }
      }
      expect((await value(store.docs.list([]))).items).toEqual([]);
      expect(await value(store.logs.list([]))).toEqual([]);
    });

    it("keeps instances isolated from each other", async () => {
      const left = await open();
      const right = await open();
      await value(left.docs.put(["shared"], { side: "left" }, { create: true }));
      await value(left.logs.append(["shared"], [{ id: "a", value: 1 }]));
      await value(left.leases.acquire("shared", "left", { ttlMs: 10_000 }));
      expect(await value(right.docs.get(["shared"]))).toBeUndefined();
      expect(await value(right.logs.read(["shared"]))).toEqual([]);
      expect(await value(right.leases.current("shared"))).toBeUndefined();
      expect((await value(right.docs.put(["shared"], { side: "right" }, { create: true }))).version).toBe(1);
    });

    if (target.check === false) {
      it("answers check() with unsupported, as declared", async () => {
        const store = await open();
        expect(await code(store.check())).toBe("unsupported");
      });
    } else {
      it("reports a clean integrity check of data it wrote, repair or not", async () => {
        const store = await open();
        await value(store.docs.put(["d"], 1, { create: true }));
        await value(store.docs.delete(["d"], { expectedVersion: 1 }));
        await value(store.docs.put(["e"], { x: [1, "two"] }, { create: true }));
        await value(store.logs.append(["l"], [{ id: "a", value: 1 }, { id: "b", value: 2 }]));
        for (const options of [undefined, { repair: false }, { repair: true }]) {
          const report = await value(store.check(options));
          expect(report.ok).toBe(true);
          expect(report.problems).toEqual([]);
          expect(report.repaired).toEqual([]);
        }
        expect((await value(store.docs.get(["e"])))?.value).toEqual({ x: [1, "two"] });
      });
    }

    it("refuses work after close with unavailable", async () => {
      const store = await open();
      await value(store.docs.put(["d"], 1, { create: true }));
      await store.close();
      expect(await code(store.docs.get(["d"]))).toBe("unavailable");
      expect(await code(store.logs.append(["l"], [{ id: "a", value: 1 }]))).toBe("unavailable");
      expect(await code(store.leases.current("x"))).toBe("unavailable");
      expect(["process", "host", "cluster"]).toContain(store.capabilities.scope);
    });
  });
}
