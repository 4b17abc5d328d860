/**
 * A custom store adapter: every key of the inner store is placed under one namespace segment, so
 * that several tenants can share one store without seeing each other. It shows the shape of an
 * adapter (a `KeelStore` whose parts forward to ports) and how the testkit validates one:
 * see `namespaced-store.test.ts`.
 */
import { KeelError, parseSafeName } from "@keel/core";
import { type KeelStore, type Key } from "@keel/store";
import { validateKey } from "@keel/store/kit";
import { errAsync, type ResultAsync } from "neverthrow";

/** Wraps `inner` so that every document, log and lease lives under `namespace`. */
export function createNamespacedStore(inner: KeelStore, namespace: string): KeelStore {
  const name = parseSafeName(namespace, "namespace");
  if (name.isErr()) throw name.error;
  const ns = name.value;
  // Validate first, so that a hostile key is refused as itself, not as part of a longer key.
  const within = <T>(key: Key, allowEmpty: boolean, call: (full: string[]) => ResultAsync<T, KeelError>) => {
    const checked = validateKey(key, "key", allowEmpty);
    return checked.isErr() ? errAsync(checked.error) : call([ns, ...checked.value]);
  };
  const strip = (key: string[]) => key.slice(1);
  const lease = (leaseName: string) => `${ns}.${leaseName}`;
  const unlease = (leaseName: string) => leaseName.slice(ns.length + 1);
  const fenced = <T extends { fence?: { lease: string; token: number } }>(options: T): T =>
    options?.fence ? { ...options, fence: { ...options.fence, lease: lease(options.fence.lease) } } : options;
  const checkedLease = <T>(leaseName: unknown, call: (full: string) => ResultAsync<T, KeelError>) => {
    const checked = parseSafeName(leaseName, "lease name");
    return checked.isErr() ? errAsync(checked.error) : call(lease(checked.value));
  };

  return {
    // The guarantees only: the optional docs.batch / docs.readPage are not wrapped, so not declared.
    capabilities: { scope: inner.capabilities.scope, durability: inner.capabilities.durability, maxValueBytes: inner.capabilities.maxValueBytes },
    check: (options) => inner.check(options),
    close: () => inner.close(),
    docs: {
      get: (key) => within(key, false, (full) => inner.docs.get(full).map((doc) => doc && { ...doc, key: strip(doc.key) })),
      put: (key, value, condition) =>
        within(key, false, (full) => inner.docs.put(full, value, fenced(condition)).map((doc) => ({ ...doc, key: strip(doc.key) }))),
      delete: (key, condition) => within(key, false, (full) => inner.docs.delete(full, fenced(condition))),
      list: (prefix, page) =>
        within(prefix, true, (full) =>
          inner.docs.list(full, page).map((listed) => ({ ...listed, items: listed.items.map((item) => ({ ...item, key: strip(item.key) })) })),
        ),
    },
    logs: {
      append: (log, records, options) => within(log, false, (full) => inner.logs.append(full, records, options && fenced(options))),
      read: (log, options) => within(log, false, (full) => inner.logs.read(full, options)),
      head: (log) => within(log, false, (full) => inner.logs.head(full)),
      delete: (log, options) => within(log, false, (full) => inner.logs.delete(full, options && fenced(options))),
      list: (prefix) => within(prefix, true, (full) => inner.logs.list(full).map((keys) => keys.map(strip))),
    },
    leases: {
      acquire: (leaseName, holder, options) =>
        checkedLease(leaseName, (full) => inner.leases.acquire(full, holder, options).map((held) => ({ ...held, name: unlease(held.name) }))),
      renew: (held, options) =>
        checkedLease(held?.name, (full) => inner.leases.renew({ ...held, name: full }, options).map((renewed) => ({ ...renewed, name: held.name }))),
      release: (held) => checkedLease(held?.name, (full) => inner.leases.release({ ...held, name: full })),
      current: (leaseName) =>
        checkedLease(leaseName, (full) => inner.leases.current(full).map((held) => held && { ...held, name: unlease(held.name) })),
    },
  };
}
