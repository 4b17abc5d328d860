import { z } from "zod";
import type { KeelStore } from "./ports.js";

/** A port of a {@link KeelStore}: its documents, its logs or its leases. */
export type StorePort = "docs" | "logs" | "leases";

/** The methods every store's port has (the optional `batch`, `readPage` and `update` of `docs` aside). */
const PORT_METHODS: Record<StorePort, readonly string[]> = {
  docs: ["get", "put", "delete", "list"],
  logs: ["append", "read", "head", "delete", "list"],
  leases: ["acquire", "renew", "release", "current"],
};

const ALL_PORTS: readonly StorePort[] = ["docs", "logs", "leases"];

/**
 * True when `value` is a {@link KeelStore}: its three ports with their methods, `check` and
 * `close`. With `ports`, true when it has those ports alone, each with its methods: a package
 * that uses only some ports names them, so that a caller may hand it a store with those alone.
 * The shape check behind every option that takes a store.
 *
 * @example
 * ```ts
 * isKeelStore(createMemoryStore()); // true
 * isKeelStore({ logs: createMemoryStore().logs }, ["logs"]); // true
 * ```
 */
export function isKeelStore(value: unknown): value is KeelStore;
export function isKeelStore<P extends StorePort>(value: unknown, ports: readonly P[]): value is Pick<KeelStore, P>;
export function isKeelStore(value: unknown, ports?: readonly StorePort[]): boolean {
  if (typeof value !== "object" || value === null) return false;
  const store = value as Record<string, unknown>;
  for (const port of ports ?? ALL_PORTS) {
    const methods = store[port];
    if (typeof methods !== "object" || methods === null) return false;
    for (const method of PORT_METHODS[port]) if (typeof (methods as Record<string, unknown>)[method] !== "function") return false;
  }
  return ports !== undefined || (typeof store["check"] === "function" && typeof store["close"] === "function");
}

/**
 * The zod schema of a `store` option: {@link isKeelStore} (over `ports` when given), refused as
 * "store must be a KeelStore …". Every package that takes a store validates it with this.
 *
 * @example
 * ```ts
 * const OptionsSchema = z.strictObject({ store: keelStoreSchema(["docs", "logs"]) });
 * ```
 */
export function keelStoreSchema(): z.ZodType<KeelStore>;
export function keelStoreSchema<P extends StorePort>(ports: readonly P[]): z.ZodType<Pick<KeelStore, P>>;
export function keelStoreSchema(ports?: readonly StorePort[]): z.ZodType<unknown> {
  const needs = ports === undefined ? "" : ` with ${ports.join(" and ")}`;
  const message = `store must be a KeelStore${needs} (createMemoryStore(), createFsStore(...), ...)`;
  return ports === undefined ? z.custom<KeelStore>((value) => isKeelStore(value), message) : z.custom((value) => isKeelStore(value, ports), message);
}
