import { validate } from "@keel/core";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "./memory-store.js";
import { isKeelStore, keelStoreSchema } from "./store-shape.js";

describe("isKeelStore and keelStoreSchema", () => {
  const store = createMemoryStore();

  it("accepts a store, and a part of one when the ports are named", () => {
    expect(isKeelStore(store)).toBe(true);
    expect(isKeelStore({ logs: store.logs }, ["logs"])).toBe(true);
    expect(isKeelStore({ docs: store.docs, logs: store.logs }, ["docs", "logs"])).toBe(true);
  });

  it("refuses what lacks a port, a port's method, check or close", () => {
    for (const value of [undefined, null, "sqlite:x", {}, { docs: store.docs, logs: store.logs, leases: store.leases }]) expect(isKeelStore(value)).toBe(false);
    expect(isKeelStore({ logs: { ...store.logs, head: undefined } }, ["logs"])).toBe(false);
    expect(isKeelStore({ docs: store.docs }, ["docs", "logs"])).toBe(false);
  });

  it("answers a wrong store option with invalid_input naming the store", () => {
    const refused = validate(keelStoreSchema(["docs"]), { logs: store.logs }, "options");
    expect(refused._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(refused._unsafeUnwrapErr().message).toContain("store must be a KeelStore with docs");
    expect(validate(keelStoreSchema(), store, "options").isOk()).toBe(true);
  });
});
