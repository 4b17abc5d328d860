import type { Doc, DocDecision, KeelStore } from "@keel/store";
import { describe, expect, it } from "vitest";
import { code, createStoreConformanceHarness, value, type StoreConformanceTarget } from "./store-conformance-harness.js";

const updateOf = (store: KeelStore) => {
  if (!store.docs.update) throw new Error("the store declares lockedUpdates but has no docs.update");
  return store.docs.update.bind(store.docs);
};

/** A pure decision: the counter at `n` plus one (a missing document starts at 0). */
const increment = (current: Doc | undefined): DocDecision => ({ value: { n: ((current?.value as { n?: number } | undefined)?.n ?? 0) + 1 } });

/**
 * The optional `docs.update` of DESIGN.md §3 (capability `lockedUpdates`): a read-modify-write
 * under the store's lock on the document. Registered by {@link describeBatchConformance} when the
 * target declares `lockedUpdates`; one `describe` block.
 */
export function describeLockedUpdateConformance(target: StoreConformanceTarget): void {
  describe(`store conformance: ${target.name}: locked updates`, () => {
    const { open, reopen } = createStoreConformanceHarness(target);

    it("creates a missing document, then changes it at the next version, deciding on the current one", async () => {
      const store = await open();
      const update = updateOf(store);
      const seen: (Doc | undefined)[] = [];
      const created = await value(update(["u", "a"], (current) => (seen.push(current), increment(current))));
      expect([created?.key, created?.value, created?.version]).toEqual([["u", "a"], { n: 1 }, 1]);
      const changed = await value(update(["u", "a"], (current) => (seen.push(current), increment(current))));
      expect([changed?.value, changed?.version]).toEqual([{ n: 2 }, 2]);
      expect(seen.map((doc) => doc && [doc.value, doc.version])).toEqual([undefined, [{ n: 1 }, 1]]);
      const read = await value(store.docs.get(["u", "a"]));
      expect([read?.value, read?.version, read?.updatedAt]).toEqual([{ n: 2 }, 2, changed?.updatedAt]);
      (changed!.value as { n: number }).n = 99;
      expect((await value(store.docs.get(["u", "a"])))?.value).toEqual({ n: 2 });
    });

    it("writes nothing for { none: true } and returns the current document (or none)", async () => {
      const store = await open();
      const update = updateOf(store);
      expect(await value(update(["u", "none"], () => ({ none: true })))).toBeUndefined();
      expect(await value(store.docs.get(["u", "none"]))).toBeUndefined();
      await value(store.docs.put(["u", "none"], { n: 5 }, { create: true }));
      const kept = await value(update(["u", "none"], () => ({ none: true })));
      expect([kept?.value, kept?.version]).toEqual([{ n: 5 }, 1]);
      expect((await value(store.docs.get(["u", "none"])))?.version).toBe(1);
    });

    it("sees a deleted document as none and writes above its tombstone's version", async () => {
      const store = await open();
      await value(store.docs.put(["u", "d"], { n: 7 }, { create: true }));
      await value(store.docs.delete(["u", "d"], { expectedVersion: 1 }));
      const seen: (Doc | undefined)[] = [];
      const written = await value(updateOf(store)(["u", "d"], (current) => (seen.push(current), increment(current))));
      expect(seen).toEqual([undefined]);
      expect([written?.value, written?.version]).toEqual([{ n: 1 }, 3]);
      expect(await code(store.docs.put(["u", "d"], { n: 0 }, { expectedVersion: 1 }))).toBe("conflict");
    });

    it("loses no concurrent update, from one handle or two, and never answers conflict", async () => {
      const store = await open();
      const handles = target.reopen ? [store, await reopen(store)] : [store];
      const writers = 24;
      const outcomes = await Promise.all(Array.from({ length: writers }, (_, index) => updateOf(handles[index % handles.length]!)(["u", "hot"], increment)));
      expect(outcomes.filter((outcome) => outcome.isErr()).map((outcome) => outcome.isErr() && outcome.error.code)).toEqual([]);
      const versions = outcomes.map((outcome) => outcome._unsafeUnwrap()?.version).sort((a, b) => a! - b!);
      expect(versions).toEqual(Array.from({ length: writers }, (_, index) => index + 1));
      const read = await value(store.docs.get(["u", "hot"]));
      expect([read?.value, read?.version]).toEqual([{ n: writers }, writers]);
    });

    it("refuses bad input and bad decisions with invalid_input or too_large, writing nothing", async () => {
      const store = await open();
      const update = updateOf(store);
      await value(store.docs.put(["u", "bad"], { n: 1 }, { create: true }));
      expect(await code(update(["../u"], increment))).toBe("invalid_input");
      expect(await code(update(["u", "bad"], "not a function" as never))).toBe("invalid_input");
      expect(await code(update(["u", "bad"], increment, { fence: { lease: "l", token: -1 } } as never))).toBe("invalid_input");
      expect(await code(update(["u", "bad"], () => ({ value: { at: new Date() } as never })))).toBe("invalid_input");
      expect(await code(update(["u", "bad"], () => ({ value: undefined as never })))).toBe("invalid_input");
      expect(await code(update(["u", "bad"], () => ({}) as never))).toBe("invalid_input");
      expect(
        await code(
          update(["u", "bad"], () => {
            throw new Error("decided badly");
          }),
        ),
      ).toBe("invalid_input");
      expect(await code(update(["u", "bad"], () => ({ value: "x".repeat(store.capabilities.maxValueBytes + 1) })))).toBe("too_large");
      const read = await value(store.docs.get(["u", "bad"]));
      expect([read?.value, read?.version]).toEqual([{ n: 1 }, 1]);
    });

    it("is guarded by a fence, checked with the write", async () => {
      const store = await open();
      const update = updateOf(store);
      const first = await value(store.leases.acquire("writer", "a", { ttlMs: 60_000 }));
      const held = await value(update(["u", "f"], increment, { fence: { lease: "writer", token: first.token } }));
      expect(held?.version).toBe(1);
      await value(store.leases.release(first));
      await value(store.leases.acquire("writer", "b", { ttlMs: 60_000 }));
      expect(await code(update(["u", "f"], increment, { fence: { lease: "writer", token: first.token } }))).toBe("lease_lost");
      expect((await value(store.docs.get(["u", "f"])))?.value).toEqual({ n: 1 });
    });
  });
}
