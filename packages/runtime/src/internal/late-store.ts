import type { KeelStore } from "@keel/store";

/**
 * A store whose adapter is opened last: `createKeel` builds every part over it (each part
 * validating its options) and opens the filesystem store only when all of them are valid, so
 * that bad options never leave a `.keel/` directory behind. Every call goes to the store
 * given to `open`; none is made before it (the parts do not touch the store while being built).
 */
export interface LateStore {
  store: KeelStore;
  open(store: KeelStore): void;
}

/** Creates a {@link LateStore}. */
export function createLateStore(): LateStore {
  let target: KeelStore | undefined;
  const opened = (): KeelStore => {
    if (!target) throw new Error("the runtime's store was used before createKeel opened it");
    return target;
  };
  const store: KeelStore = {
    docs: {
      get: (key) => opened().docs.get(key),
      put: (key, value, condition) => opened().docs.put(key, value, condition),
      delete: (key, condition) => opened().docs.delete(key, condition),
      list: (prefix, page) => opened().docs.list(prefix, page),
    },
    logs: {
      append: (log, records, options) => opened().logs.append(log, records, options),
      read: (log, options) => opened().logs.read(log, options),
      head: (log) => opened().logs.head(log),
      delete: (log, options) => opened().logs.delete(log, options),
      list: (prefix) => opened().logs.list(prefix),
    },
    leases: {
      acquire: (name, holder, options) => opened().leases.acquire(name, holder, options),
      renew: (lease, options) => opened().leases.renew(lease, options),
      release: (lease) => opened().leases.release(lease),
      current: (name) => opened().leases.current(name),
    },
    get capabilities() {
      return opened().capabilities;
    },
    check: (options) => opened().check(options),
    close: () => (target ? target.close() : Promise.resolve()),
  };
  return {
    store,
    open(adapter) {
      target = adapter;
    },
  };
}
