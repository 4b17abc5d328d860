/**
 * The hostile-input property shared by the SQL stores' suites (`test/store-sqlite-hostile.test.ts`,
 * `test/store-postgres-hostile.test.ts`): every method of the three ports is called with one
 * argument swapped for a hostile value ({@link hostileValue}, {@link withHostileField}), beside
 * the memory store of `@keel/store`, the reference every adapter answers like. The adapter must
 * answer each call as the reference does (the same success or the same error code), never
 * throw, and write nothing when it refuses.
 */
import { KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import fc from "fast-check";
import { expect } from "vitest";
import { hostileString, hostileValue, withHostileField } from "./hostile.js";

/** One call of a port method: its path (`docs.put`) and its arguments. */
export interface PortCall {
  method: string;
  args: unknown[];
}

const validKey = ["hostile", "k"];
const validLease = { name: "l", holder: "h", token: 1, expiresAt: Date.now() + 60_000 };

/** A hostile key, list prefix or log name: a wrong type, an unsafe segment (NUL, `..`, `/`, huge), too deep. */
export const hostileKey: fc.Arbitrary<unknown> = fc.oneof(
  hostileValue,
  fc.array(hostileString, { minLength: 1, maxLength: 3 }).map((segments) => ["hostile", ...segments]),
  fc.constant(Array.from({ length: 17 }, (_, index) => `s${index}`)),
);

/** A hostile value for an argument that has a valid form `valid`: a wrong value, or `valid` with one field changed. */
function around(valid: unknown): fc.Arbitrary<unknown> {
  if (valid !== null && typeof valid === "object" && !Array.isArray(valid)) return fc.oneof(hostileValue, withHostileField(valid as Record<string, unknown>));
  return hostileValue;
}

/** Calls with valid arguments, one of which (at least) is swapped for a hostile one. */
function callsOf(method: string, valid: unknown[], hostile: fc.Arbitrary<unknown>[] = valid.map(around)): fc.Arbitrary<PortCall> {
  return fc.nat({ max: valid.length - 1 }).chain((index) => hostile[index]!.map((value): PortCall => ({ method, args: valid.map((arg, at) => (at === index ? value : arg)) })));
}

/** Hostile calls of every method of the document, log and lease ports. */
export const hostilePortCall: fc.Arbitrary<PortCall> = fc.oneof(
  callsOf("docs.get", [validKey], [hostileKey]),
  callsOf("docs.put", [validKey, { a: 1 }, { unconditional: true }], [hostileKey, hostileValue, around({ unconditional: true, fence: { lease: "l", token: 1 } })]),
  callsOf("docs.delete", [validKey, { unconditional: true }], [hostileKey, around({ expectedVersion: 1, fence: { lease: "l", token: 1 } })]),
  callsOf("docs.list", [[], { limit: 10 }], [hostileKey, around({ after: "a", limit: 10 })]),
  callsOf("docs.readPage", [[], { limit: 10 }], [hostileKey, around({ after: "a", limit: 10 })]),
  callsOf("docs.batch", [[{ key: validKey, value: 1, condition: { unconditional: true } }], undefined], [
    fc.oneof(hostileValue, fc.array(withHostileField({ key: validKey, value: 1, condition: { unconditional: true } }), { minLength: 1, maxLength: 2 })),
    around({ fence: { lease: "l", token: 1 } }),
  ]),
  callsOf("logs.append", [validKey, [{ id: "r", value: 1 }], { expectedSeq: 0 }], [
    hostileKey,
    fc.oneof(hostileValue, fc.array(withHostileField({ id: "r", value: 1 }), { minLength: 1, maxLength: 2 })),
    around({ expectedSeq: 0, durable: true, fence: { lease: "l", token: 1 } }),
  ]),
  callsOf("logs.read", [validKey, { afterSeq: 0, limit: 10 }]),
  callsOf("logs.head", [validKey], [hostileKey]),
  callsOf("logs.delete", [validKey, { fence: { lease: "l", token: 1 } }], [hostileKey, around({ fence: { lease: "l", token: 1 } })]),
  callsOf("logs.list", [[]], [hostileKey]),
  callsOf("leases.acquire", ["l", "h", { ttlMs: 60_000 }], [hostileString, hostileString, around({ ttlMs: 60_000, waitMs: 0 })]),
  callsOf("leases.renew", [validLease, { ttlMs: 1_000 }]),
  callsOf("leases.release", [validLease]),
  callsOf("leases.current", ["l"], [hostileString]),
  callsOf("check", [{ repair: false }]),
);

/** Everything a store holds that a refused call could have changed: documents with versions, logs with heads, one lease. */
export async function snapshot(store: KeelStore): Promise<unknown> {
  // readPage gives the values too; a store without it is compared by its listing.
  const documents = store.docs.readPage ? await store.docs.readPage([], { limit: 1000 }) : await store.docs.list([], { limit: 1000 });
  const logs = await store.logs.list([]);
  const heads = logs.isOk() ? await Promise.all(logs.value.map(async (log) => [log, (await store.logs.head(log)).unwrapOr(undefined)])) : [];
  const lease = await store.leases.current("l");
  return {
    documents: documents.isOk() ? documents.value.items.map((doc) => [doc.key, doc.version, "value" in doc ? doc.value : undefined]) : documents.error.code,
    heads,
    lease: lease.isOk() ? lease.value && [lease.value.holder, lease.value.token] : lease.error.code,
  };
}

/** Calls `call.method` on `store`: the outcome as `ok`, an error code, or `threw: …` (a contract breach). */
export async function outcomeOf(store: KeelStore, call: PortCall): Promise<string> {
  const [port, name] = call.method.split(".") as [keyof KeelStore, string | undefined];
  try {
    type Method = (...args: unknown[]) => PromiseLike<{ isOk(): boolean; error?: unknown }>;
    const owner = (name === undefined ? store : store[port]) as unknown as Record<string, Method>;
    const result = await owner[name ?? port]!.call(owner, ...call.args);
    if (result.isOk()) return "ok";
    return KeelError.is(result.error) ? result.error.code : `untyped error: ${String(result.error)}`;
  } catch (error) {
    return `threw: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  }
}

/**
 * Runs {@link hostilePortCall}s against `store` and a fresh memory store side by side: each must
 * answer as the memory store does, with a typed error or success, and a refusal must leave the
 * store as it was.
 */
export async function checkPortsAgainstReference(store: KeelStore, reference: KeelStore, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(hostilePortCall, async (call) => {
      const before = await snapshot(store);
      const expected = await outcomeOf(reference, call);
      const actual = await outcomeOf(store, call);
      expect(actual, `${call.method}: the reference answered ${expected}`).toBe(expected);
      expect(actual).not.toMatch(/^(threw|untyped)/);
      if (actual !== "ok") expect(await snapshot(store)).toEqual(before);
    }),
    { numRuns },
  );
}
