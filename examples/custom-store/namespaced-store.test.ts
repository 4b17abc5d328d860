import { createMemoryStore } from "@keel/store";
import { describeStoreConformance } from "@keel/testkit/store";
import { describe, expect, it } from "vitest";
import { createNamespacedStore } from "./namespaced-store.js";

// The whole storage contract, run against the custom adapter in three lines.
describeStoreConformance({ name: "namespaced(memory)", create: async () => createNamespacedStore(createMemoryStore(), "tenant-a") });

describe("namespaced store", () => {
  it("keeps tenants apart in one inner store", async () => {
    const inner = createMemoryStore();
    const a = createNamespacedStore(inner, "a");
    const b = createNamespacedStore(inner, "b");
    await a.docs.put(["config"], { owner: "a" }, { create: true });
    expect((await b.docs.get(["config"]))._unsafeUnwrap()).toBeUndefined();
    expect((await inner.docs.get(["a", "config"]))._unsafeUnwrap()?.value).toEqual({ owner: "a" });
  });

  it("refuses a bad namespace at construction", () => {
    expect(() => createNamespacedStore(createMemoryStore(), "../x")).toThrow(/not a safe name/);
  });
});
