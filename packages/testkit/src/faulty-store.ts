import { KeelError, type KeelErrorCode } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { errAsync, type ResultAsync } from "neverthrow";

/** A store operation that a fault can target. */
export type FaultOperation =
  | "docs.get"
  | "docs.put"
  | "docs.delete"
  | "docs.list"
  | "logs.append"
  | "logs.read"
  | "logs.head"
  | "logs.delete"
  | "logs.list"
  | "leases.acquire"
  | "leases.renew"
  | "leases.release"
  | "leases.current";

/** One rule of a fault plan: which calls fail, with what, and when. */
export interface FaultRule {
  /** The operation(s) that fail. */
  operation: FaultOperation | FaultOperation[];
  /** Only calls whose key (a lease's name as `[name]`) starts with these segments. */
  keyPrefix?: string[];
  /** The error code reported (default `io_failed`). */
  code?: KeelErrorCode;
  /** How many matching calls fail (default: every one). */
  times?: number;
  /** Let this many matching calls through before failing (default 0). */
  skip?: number;
  /**
   * `before` (default): fail without doing the operation.
   * `after`: do the operation, then report the failure (an ambiguous outcome, as when a
   * connection drops after a commit).
   */
  when?: "before" | "after";
}

/** A fault that fired. */
export interface FaultHit {
  operation: FaultOperation;
  key: string[];
  code: KeelErrorCode;
}

/** A store wrapped by {@link createFaultyStore}, with its fault plan. */
export interface FaultyStore extends KeelStore {
  faults: {
    /** Adds a rule. */
    add(rule: FaultRule): void;
    /** Removes every rule (hits are kept). */
    clear(): void;
    /** The faults that fired so far, in order. */
    hits(): FaultHit[];
  };
}

interface ActiveRule {
  rule: FaultRule;
  operations: ReadonlySet<FaultOperation>;
  seen: number;
  fired: number;
}

/**
 * Wraps a store so that chosen operations fail, for the "nothing is lost" tests of domain
 * packages: a failing read, a failing write, or a write that succeeded but reported failure.
 * Calls that no rule matches pass through unchanged.
 *
 * @example
 * ```ts
 * const store = createFaultyStore(createMemoryStore(), [
 *   { operation: "docs.put", keyPrefix: ["missions"], code: "io_failed", times: 1 },
 * ]);
 * ```
 */
export function createFaultyStore(store: KeelStore, plan: FaultRule[] = []): FaultyStore {
  let rules: ActiveRule[] = [];
  const hits: FaultHit[] = [];
  const add = (rule: FaultRule) => {
    const operations = new Set(Array.isArray(rule.operation) ? rule.operation : [rule.operation]);
    rules.push({ rule, operations, seen: 0, fired: 0 });
  };
  plan.forEach(add);

  const match = (operation: FaultOperation, key: unknown): { rule: FaultRule; key: string[] } | undefined => {
    const segments = Array.isArray(key) ? key.map(String) : [String(key)];
    for (const active of rules) {
      if (!active.operations.has(operation)) continue;
      const prefix = active.rule.keyPrefix ?? [];
      if (prefix.some((segment, index) => segments[index] !== segment)) continue;
      active.seen++;
      if (active.seen <= (active.rule.skip ?? 0)) continue;
      if (active.fired >= (active.rule.times ?? Number.POSITIVE_INFINITY)) continue;
      active.fired++;
      return { rule: active.rule, key: segments };
    }
    return undefined;
  };

  const guard = <T>(operation: FaultOperation, key: unknown, call: () => ResultAsync<T, KeelError>): ResultAsync<T, KeelError> => {
    const fault = match(operation, key);
    if (!fault) return call();
    const code = fault.rule.code ?? "io_failed";
    hits.push({ operation, key: fault.key, code });
    const error = () =>
      new KeelError(code, `injected fault: ${operation} on ${fault.key.join("/")} failed (${fault.rule.when ?? "before"})`, {
        details: { injected: true, operation, key: fault.key },
      });
    if (fault.rule.when === "after") return call().andThen(() => errAsync(error()));
    return errAsync(error());
  };
  const leaseName = (lease: unknown) => (lease as { name?: unknown } | null)?.name;

  return {
    // The guarantees only: the optional docs.batch / docs.readPage are not wrapped, so not declared.
    capabilities: { scope: store.capabilities.scope, durability: store.capabilities.durability, maxValueBytes: store.capabilities.maxValueBytes },
    check: (options) => store.check(options),
    close: () => store.close(),
    docs: {
      get: (key) => guard("docs.get", key, () => store.docs.get(key)),
      put: (key, value, condition) => guard("docs.put", key, () => store.docs.put(key, value, condition)),
      delete: (key, condition) => guard("docs.delete", key, () => store.docs.delete(key, condition)),
      list: (prefix, page) => guard("docs.list", prefix, () => store.docs.list(prefix, page)),
    },
    logs: {
      append: (log, records, options) => guard("logs.append", log, () => store.logs.append(log, records, options)),
      read: (log, options) => guard("logs.read", log, () => store.logs.read(log, options)),
      head: (log) => guard("logs.head", log, () => store.logs.head(log)),
      delete: (log, options) => guard("logs.delete", log, () => store.logs.delete(log, options)),
      list: (prefix) => guard("logs.list", prefix, () => store.logs.list(prefix)),
    },
    leases: {
      acquire: (name, holder, options) => guard("leases.acquire", name, () => store.leases.acquire(name, holder, options)),
      renew: (lease, options) => guard("leases.renew", leaseName(lease), () => store.leases.renew(lease, options)),
      release: (lease) => guard("leases.release", leaseName(lease), () => store.leases.release(lease)),
      current: (name) => guard("leases.current", name, () => store.leases.current(name)),
    },
    faults: {
      add,
      clear: () => {
        rules = [];
      },
      hits: () => [...hits],
    },
  };
}
