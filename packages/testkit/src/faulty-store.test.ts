import { createMemoryStore } from "@keel/store";
import { createFaultyStore } from "@keel/testkit";
import { describeStoreConformance } from "@keel/testkit/store";
import { describe, expect, it } from "vitest";

describe("createFaultyStore", () => {
  it("fails matching calls before doing them, counting skip and times", async () => {
    const inner = createMemoryStore();
    const store = createFaultyStore(inner, [{ operation: "docs.put", keyPrefix: ["missions"], skip: 1, times: 1 }]);
    expect((await store.docs.put(["missions", "a"], 1, { create: true })).isOk()).toBe(true);
    const failed = await store.docs.put(["missions", "b"], 2, { create: true });
    expect(failed.isErr() && failed.error.code).toBe("io_failed");
    expect((await inner.docs.get(["missions", "b"]))._unsafeUnwrap()).toBeUndefined();
    expect((await store.docs.put(["missions", "c"], 3, { create: true })).isOk()).toBe(true);
    expect((await store.docs.put(["other"], 4, { create: true })).isOk()).toBe(true);
    expect(store.faults.hits()).toEqual([{ operation: "docs.put", key: ["missions", "b"], code: "io_failed" }]);
  });

  it("can report failure after the operation took effect (ambiguous outcome)", async () => {
    const inner = createMemoryStore();
    const store = createFaultyStore(inner);
    store.faults.add({ operation: ["logs.append"], when: "after", code: "unavailable" });
    const result = await store.logs.append(["log"], [{ id: "a", value: 1 }]);
    expect(result.isErr() && result.error.code).toBe("unavailable");
    expect((await inner.logs.read(["log"]))._unsafeUnwrap()).toHaveLength(1);
    store.faults.clear();
    expect((await store.logs.append(["log"], [{ id: "a", value: 1 }]))._unsafeUnwrap()).toEqual({ lastSeq: 1, appended: 0, deduplicated: 1 });
  });

  it("targets leases by name", async () => {
    const store = createFaultyStore(createMemoryStore(), [{ operation: ["leases.acquire", "leases.release"], keyPrefix: ["bad"], code: "unavailable" }]);
    expect((await store.leases.acquire("bad", "h", { ttlMs: 100 })).isErr()).toBe(true);
    const lease = (await store.leases.acquire("good", "h", { ttlMs: 100 }))._unsafeUnwrap();
    expect((await store.leases.release(lease)).isOk()).toBe(true);
  });
});

// A faulty store with no rules is a transparent wrapper: it must pass the whole contract.
describeStoreConformance({ name: "faulty(memory) without faults", create: async () => createFaultyStore(createMemoryStore()) });
