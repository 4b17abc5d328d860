import type { KeelError } from "@keel/core";
import { type KeelStore, type Lease } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { afterEach, describe, expect, it } from "vitest";
import { errOf, okValue, type AnyResult } from "../result-assertions.js";

/** What {@link describeStoreConformance} needs to test an adapter. */
export interface StoreConformanceTarget {
  /** The adapter's name, shown in test titles. */
  name: string;
  /** Creates a new, empty, isolated store: no two instances may see each other's data. */
  create: () => Promise<KeelStore>;
  /** Frees what `create` made (after `close`), e.g. removes a temp directory or schema. */
  destroy?: (store: KeelStore) => Promise<void>;
  /** A short lease time to live for the expiry tests (default 80 ms). */
  shortTtlMs?: number;
}

const value = okValue;
const code = async <T>(outcome: AnyResult<T>): Promise<string> => (await errOf(outcome)).code;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
 * The storage conformance suite: every rule of the storage contract (DESIGN.md §3), run against
 * one adapter. Call it at the top level of a test file:
 *
 * ```ts
 * describeStoreConformance({ name: "memory", create: async () => createMemoryStore() });
 * ```
 *
 * Each test creates its own store through `target.create()` and closes it afterwards.
 */
export function describeStoreConformance(target: StoreConformanceTarget): void {
  const ttl = target.shortTtlMs ?? 80;
  describe(`store conformance: ${target.name}`, () => {
    const opened: KeelStore[] = [];
    const open = async () => {
      const store = await target.create();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      for (const store of opened.splice(0)) {
        await store.close();
        await target.destroy?.(store);
      }
    });

    describe("documents", () => {
      it("assigns versions from 1, strictly increasing, and returns copies", async () => {
        const store = await open();
        const first = await value(store.docs.put(["missions", "m1"], { n: 1, list: [1] }, { create: true }));
        expect(first.version).toBe(1);
        expect(first.key).toEqual(["missions", "m1"]);
        const second = await value(store.docs.put(["missions", "m1"], { n: 2, list: [1] }, { expectedVersion: 1 }));
        expect(second.version).toBe(2);
        const third = await value(store.docs.put(["missions", "m1"], { n: 3, list: [1] }, { unconditional: true }));
        expect(third.version).toBe(3);
        const read = await value(store.docs.get(["missions", "m1"]));
        expect(read?.value).toEqual({ n: 3, list: [1] });
        expect(read?.version).toBe(3);
        expect(typeof read?.updatedAt).toBe("string");
        (read!.value as { list: number[] }).list.push(99);
        expect((await value(store.docs.get(["missions", "m1"])))?.value).toEqual({ n: 3, list: [1] });
        expect(await value(store.docs.get(["missions", "absent"]))).toBeUndefined();
      });

      it("refuses a stale version with conflict and changes nothing", async () => {
        const store = await open();
        await value(store.docs.put(["d"], { v: "a" }, { create: true }));
        await value(store.docs.put(["d"], { v: "b" }, { expectedVersion: 1 }));
        expect(await code(store.docs.put(["d"], { v: "stale" }, { expectedVersion: 1 }))).toBe("conflict");
        expect(await code(store.docs.put(["d"], { v: "future" }, { expectedVersion: 7 }))).toBe("conflict");
        expect(await code(store.docs.put(["d"], { v: "again" }, { create: true }))).toBe("conflict");
        expect(await code(store.docs.put(["none"], { v: 1 }, { expectedVersion: 1 }))).toBe("conflict");
        const read = await value(store.docs.get(["d"]));
        expect(read?.value).toEqual({ v: "b" });
        expect(read?.version).toBe(2);
        expect(await value(store.docs.get(["none"]))).toBeUndefined();
      });

      it("allows a blind write only when it says { unconditional: true }", async () => {
        const store = await open();
        for (const condition of [undefined, {}, { expectedVersion: 1, create: true }, { unconditional: false }, { expectedVersion: -1 }, { create: true, extra: 1 }]) {
          expect(await code(store.docs.put(["d"], { v: 1 }, condition as never))).toBe("invalid_input");
        }
        expect(await value(store.docs.get(["d"]))).toBeUndefined();
        expect((await value(store.docs.put(["d"], { v: 1 }, { unconditional: true }))).version).toBe(1);
      });

      it("rejects values that are not plain JSON and values over the size limit before writing", async () => {
        const store = await open();
        await value(store.docs.put(["d"], { keep: true }, { create: true }));
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        for (const bad of [undefined, Number.NaN, { a: Number.POSITIVE_INFINITY }, new Date(0), cyclic, { f: () => 1 }]) {
          expect(await code(store.docs.put(["d"], bad as never, { expectedVersion: 1 }))).toBe("invalid_input");
        }
        const huge = "x".repeat(store.capabilities.maxValueBytes + 10);
        expect(await code(store.docs.put(["d"], { huge }, { expectedVersion: 1 }))).toBe("too_large");
        expect(await code(store.docs.put(["big"], { huge }, { create: true }))).toBe("too_large");
        const read = await value(store.docs.get(["d"]));
        expect(read?.value).toEqual({ keep: true });
        expect(read?.version).toBe(1);
        expect(await value(store.docs.get(["big"]))).toBeUndefined();
      });

      it("leaves tombstones: a late writer with a stale version gets deleted, never resurrects", async () => {
        const store = await open();
        await value(store.docs.put(["t"], { v: 1 }, { create: true }));
        expect(await code(store.docs.delete(["t"], { expectedVersion: 9 }))).toBe("conflict");
        expect(await value(store.docs.delete(["t"], { expectedVersion: 1 }))).toBe(true);
        expect(await value(store.docs.get(["t"]))).toBeUndefined();
        expect(await code(store.docs.put(["t"], { v: "late" }, { expectedVersion: 1 }))).toBe("deleted");
        expect(await code(store.docs.delete(["t"], { expectedVersion: 1 }))).toBe("deleted");
        expect(await value(store.docs.get(["t"]))).toBeUndefined();
        expect(await value(store.docs.delete(["t"], { unconditional: true }))).toBe(false);
        expect(await value(store.docs.delete(["never"], { unconditional: true }))).toBe(false);
        expect(await code(store.docs.delete(["never"], { expectedVersion: 1 }))).toBe("conflict");
        const reborn = await value(store.docs.put(["t"], { v: "new" }, { create: true }));
        expect(reborn.version).toBeGreaterThan(1);
        expect(await code(store.docs.put(["t"], { v: "late" }, { expectedVersion: 1 }))).toBe("conflict");
        expect((await value(store.docs.list([]))).items.map((item) => item.key)).toEqual([["t"]]);
      });

      it("lists by prefix in key order, a page at a time, without tombstones", async () => {
        const store = await open();
        const keys = [
          ["m", "b"],
          ["m", "a", "deep"],
          ["m", "c"],
          ["m", "a"],
          ["n", "x"],
          ["m2", "y"],
        ];
        for (const key of keys) await value(store.docs.put(key, { key: key.join("/") }, { create: true }));
        await value(store.docs.delete(["m", "c"], { unconditional: true }));
        const all = await value(store.docs.list(["m"]));
        expect(all.items.map((item) => item.key)).toEqual([["m", "a"], ["m", "a", "deep"], ["m", "b"]]);
        expect(all.next).toBeUndefined();
        expect(all.items.every((item) => item.version === 1 && item.bytes > 0)).toBe(true);
        const seen: string[][] = [];
        let after: string | undefined;
        for (let pages = 0; pages < 10; pages++) {
          const page = await value(store.docs.list([], after === undefined ? { limit: 2 } : { limit: 2, after }));
          expect(page.items.length).toBeLessThanOrEqual(2);
          seen.push(...page.items.map((item) => item.key));
          if (!page.next) break;
          after = page.next;
        }
        expect(seen).toEqual([["m", "a"], ["m", "a", "deep"], ["m", "b"], ["m2", "y"], ["n", "x"]]);
        expect(await code(store.docs.list(["m"], { limit: 0 }))).toBe("invalid_input");
      });

      it("lets exactly one of many concurrent writers with the same expected version win", async () => {
        const store = await open();
        await value(store.docs.put(["race"], { winner: null }, { create: true }));
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, (_, index) => store.docs.put(["race"], { winner: index, pad: "p".repeat(500 + index) }, { expectedVersion: 1 })),
        );
        const winners = outcomes.flatMap((outcome, index) => (outcome.isOk() ? [index] : []));
        expect(winners).toHaveLength(1);
        expect(outcomes.filter((outcome) => outcome.isErr()).every((outcome) => outcome.isErr() && outcome.error.code === "conflict")).toBe(true);
        const read = await value(store.docs.get(["race"]));
        expect(read?.version).toBe(2);
        expect((read?.value as { winner: number }).winner).toBe(winners[0]);
      });

      it("loses no update under concurrent read-modify-write (updateDoc)", async () => {
        const store = await open();
        await Promise.all(
          Array.from({ length: 25 }, () =>
            value(updateDoc<{ count: number }>(store.docs, ["counter"], (current) => ({ count: (current?.value.count ?? 0) + 1 }), { retries: 100 })),
          ),
        );
        expect((await value(store.docs.get(["counter"])))?.value).toEqual({ count: 25 });
      });
    });

    describe("logs", () => {
      it("assigns dense seqs in order and reads them back in seq order", async () => {
        const store = await open();
        const first = await value(store.logs.append(["journal", "r1"], [{ id: "a", value: 1 }, { id: "b", value: { x: [2] } }]));
        expect(first).toEqual({ lastSeq: 2, appended: 2, deduplicated: 0 });
        const second = await value(store.logs.append(["journal", "r1"], [{ id: "c", value: "three" }]));
        expect(second.lastSeq).toBe(3);
        const records = await value(store.logs.read(["journal", "r1"]));
        expect(records.map((record) => [record.seq, record.id, record.value])).toEqual([
          [1, "a", 1],
          [2, "b", { x: [2] }],
          [3, "c", "three"],
        ]);
        expect(records.every((record) => typeof record.at === "string")).toBe(true);
        expect((await value(store.logs.read(["journal", "r1"], { afterSeq: 1, limit: 1 }))).map((record) => record.id)).toEqual(["b"]);
        expect(await value(store.logs.head(["journal", "r1"]))).toEqual({ lastSeq: 3 });
        expect(await value(store.logs.head(["journal", "none"]))).toBeUndefined();
        expect(await value(store.logs.read(["journal", "none"]))).toEqual([]);
      });

      it("makes re-appending the same id idempotent and a different value a conflict that appends nothing", async () => {
        const store = await open();
        await value(store.logs.append(["l"], [{ id: "a", value: { n: 1 } }]));
        const again = await value(store.logs.append(["l"], [{ id: "a", value: { n: 1 } }, { id: "b", value: 2 }]));
        expect(again).toEqual({ lastSeq: 2, appended: 1, deduplicated: 1 });
        expect(await code(store.logs.append(["l"], [{ id: "c", value: 3 }, { id: "a", value: { n: "other" } }]))).toBe("conflict");
        expect(await code(store.logs.append(["l"], [{ id: "d", value: 1 }, { id: "d", value: 2 }]))).toBe("conflict");
        const records = await value(store.logs.read(["l"]));
        expect(records.map((record) => record.id)).toEqual(["a", "b"]);
        expect(await value(store.logs.head(["l"]))).toEqual({ lastSeq: 2 });
      });

      it("checks expectedSeq", async () => {
        const store = await open();
        await value(store.logs.append(["l"], [{ id: "a", value: 1 }], { expectedSeq: 0 }));
        expect(await code(store.logs.append(["l"], [{ id: "b", value: 2 }], { expectedSeq: 0 }))).toBe("conflict");
        await value(store.logs.append(["l"], [{ id: "b", value: 2 }], { expectedSeq: 1 }));
        expect((await value(store.logs.read(["l"]))).map((record) => record.id)).toEqual(["a", "b"]);
      });

      it("keeps order and contiguity under bursts of concurrent appends", async () => {
        const store = await open();
        await Promise.all(
          Array.from({ length: 20 }, (_, batch) =>
            value(store.logs.append(["burst"], Array.from({ length: 25 }, (_, index) => ({ id: `${batch}-${index}`, value: { batch, index } })))),
          ),
        );
        const records = await value(store.logs.read(["burst"]));
        expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 500 }, (_, index) => index + 1));
        for (let start = 0; start < 500; start += 25) {
          const batch = (records[start]!.value as { batch: number }).batch;
          expect(records.slice(start, start + 25).map((record) => record.value)).toEqual(
            Array.from({ length: 25 }, (_, index) => ({ batch, index })),
          );
        }
      });

      it("rejects bad records before writing anything", async () => {
        const store = await open();
        const huge = "x".repeat(store.capabilities.maxValueBytes + 10);
        expect(await code(store.logs.append(["l"], [{ id: "ok", value: 1 }, { id: "big", value: huge }]))).toBe("too_large");
        for (const bad of [[{ id: "", value: 1 }], [{ id: "x\n", value: 1 }], [{ value: 1 }], [{ id: "a", value: undefined }], [{ id: "a", value: 1, extra: 2 }], "no", [null]]) {
          expect(await code(store.logs.append(["l"], bad as never))).toBe("invalid_input");
        }
        expect(await code(store.logs.append(["l"], [{ id: "a", value: 1 }], { expectedSeq: -1 }))).toBe("invalid_input");
        expect(await code(store.logs.read(["l"], { afterSeq: -1 }))).toBe("invalid_input");
        expect(await value(store.logs.head(["l"]))).toBeUndefined();
      });

      it("deletes with a tombstone: seqs are never reused and stale expectations fail", async () => {
        const store = await open();
        await value(store.logs.append(["l"], [{ id: "a", value: 1 }, { id: "b", value: 2 }]));
        expect(await value(store.logs.delete(["l"]))).toBe(true);
        expect(await value(store.logs.delete(["l"]))).toBe(false);
        expect(await value(store.logs.head(["l"]))).toBeUndefined();
        expect(await value(store.logs.read(["l"]))).toEqual([]);
        expect(await code(store.logs.append(["l"], [{ id: "c", value: 3 }], { expectedSeq: 2 }))).toBe("deleted");
        const reborn = await value(store.logs.append(["l"], [{ id: "a", value: "new life" }]));
        expect(reborn.lastSeq).toBeGreaterThan(2);
        const records = await value(store.logs.read(["l"]));
        expect(records.map((record) => record.value)).toEqual(["new life"]);
        expect(records[0]!.seq).toBeGreaterThan(2);
      });

      it("lists logs by prefix in key order", async () => {
        const store = await open();
        for (const key of [["runs", "b"], ["runs", "a"], ["other", "x"], ["runs", "a", "sub"]]) {
          await value(store.logs.append(key, [{ id: "1", value: 1 }]));
        }
        await value(store.logs.delete(["runs", "b"]));
        expect(await value(store.logs.list(["runs"]))).toEqual([["runs", "a"], ["runs", "a", "sub"]]);
      });
    });

    describe("leases and fencing", () => {
      it("grants one holder at a time with monotonic tokens", async () => {
        const store = await open();
        const first = await value(store.leases.acquire("run.r1", "alice", { ttlMs: 10_000 }));
        expect(first.token).toBeGreaterThanOrEqual(1);
        expect(first.holder).toBe("alice");
        expect(await code(store.leases.acquire("run.r1", "bob", { ttlMs: 10_000 }))).toBe("lease_held");
        const again = await value(store.leases.acquire("run.r1", "alice", { ttlMs: 10_000 }));
        expect(again.token).toBe(first.token);
        expect((await value(store.leases.current("run.r1")))?.holder).toBe("alice");
        await value(store.leases.release(again));
        await value(store.leases.release(again));
        expect(await value(store.leases.current("run.r1"))).toBeUndefined();
        const tokens = [first.token];
        for (let index = 0; index < 5; index++) {
          const lease = await value(store.leases.acquire("run.r1", `holder-${index}`, { ttlMs: 10_000 }));
          tokens.push(lease.token);
          await value(store.leases.release(lease));
        }
        for (let index = 1; index < tokens.length; index++) expect(tokens[index]!).toBeGreaterThan(tokens[index - 1]!);
      });

      it("lets an expired lease be taken over; the old holder's renew and fenced writes fail", async () => {
        const store = await open();
        const old = await value(store.leases.acquire("mission.m1", "zombie", { ttlMs: ttl }));
        const fence = { lease: old.name, token: old.token };
        await value(store.docs.put(["guarded"], { by: "zombie" }, { create: true, fence }));
        await value(store.logs.append(["guarded-log"], [{ id: "z1", value: 1 }], { fence }));
        await sleep(ttl * 2 + 20);
        expect(await value(store.leases.current("mission.m1"))).toBeUndefined();
        const fresh = await value(store.leases.acquire("mission.m1", "successor", { ttlMs: 10_000 }));
        expect(fresh.token).toBeGreaterThan(old.token);
        expect(await code(store.leases.renew(old))).toBe("lease_lost");
        expect(await code(store.docs.put(["guarded"], { by: "zombie-late" }, { expectedVersion: 1, fence }))).toBe("lease_lost");
        expect(await code(store.docs.put(["other"], { by: "zombie-late" }, { create: true, fence }))).toBe("lease_lost");
        expect(await code(store.docs.delete(["guarded"], { unconditional: true, fence }))).toBe("lease_lost");
        expect(await code(store.logs.append(["guarded-log"], [{ id: "z2", value: 2 }], { fence }))).toBe("lease_lost");
        expect(await code(store.logs.delete(["guarded-log"], { fence }))).toBe("lease_lost");
        expect((await value(store.docs.get(["guarded"])))?.value).toEqual({ by: "zombie" });
        expect(await value(store.docs.get(["other"]))).toBeUndefined();
        expect((await value(store.logs.read(["guarded-log"]))).map((record) => record.id)).toEqual(["z1"]);
        const newFence = { lease: fresh.name, token: fresh.token };
        expect((await value(store.docs.put(["guarded"], { by: "successor" }, { expectedVersion: 1, fence: newFence }))).version).toBe(2);
        await value(store.leases.release(old));
        expect((await value(store.leases.current("mission.m1")))?.holder).toBe("successor");
      });

      it("refuses to renew an expired lease though no one took it over; taking it again gives a new token", async () => {
        const store = await open();
        const lease = await value(store.leases.acquire("lapsed", "alice", { ttlMs: ttl }));
        await sleep(ttl * 2 + 20);
        expect(await code(store.leases.renew(lease, { ttlMs: 10_000 }))).toBe("lease_lost");
        expect(await code(store.docs.put(["d"], 1, { create: true, fence: { lease: "lapsed", token: lease.token } }))).toBe("lease_lost");
        expect(await value(store.leases.current("lapsed"))).toBeUndefined();
        const again = await value(store.leases.acquire("lapsed", "alice", { ttlMs: 10_000 }));
        expect(again.token).toBeGreaterThan(lease.token);
        expect(await code(store.docs.put(["d"], 1, { create: true, fence: { lease: "lapsed", token: lease.token } }))).toBe("lease_lost");
      });

      it("lets only its holder renew or release a lease, even given its token", async () => {
        const store = await open();
        const lease = await value(store.leases.acquire("owned", "alice", { ttlMs: 10_000 }));
        const forged: Lease = { ...lease, holder: "mallory" };
        expect(await code(store.leases.renew(forged))).toBe("lease_lost");
        // Releasing a lease one does not hold changes nothing (as releasing one twice does).
        await value(store.leases.release(forged));
        expect(await value(store.leases.current("owned"))).toMatchObject({ holder: "alice", token: lease.token });
        await value(store.docs.put(["d"], 1, { create: true, fence: { lease: "owned", token: lease.token } }));
        expect(await code(store.leases.acquire("owned", "mallory", { ttlMs: 10_000 }))).toBe("lease_held");
      });

      it("fails a fenced write after the lease was released", async () => {
        const store = await open();
        const lease = await value(store.leases.acquire("l1", "a", { ttlMs: 10_000 }));
        await value(store.leases.release(lease));
        expect(await code(store.docs.put(["d"], 1, { create: true, fence: { lease: "l1", token: lease.token } }))).toBe("lease_lost");
        expect(await code(store.docs.put(["d"], 1, { create: true, fence: { lease: "never", token: 1 } }))).toBe("lease_lost");
        expect(await value(store.docs.get(["d"]))).toBeUndefined();
      });

      it("renews a live lease and waits for a held one when asked", async () => {
        const store = await open();
        const lease = await value(store.leases.acquire("w", "a", { ttlMs: 1_000 }));
        const renewed = await value(store.leases.renew(lease, { ttlMs: 5_000 }));
        expect(renewed.token).toBe(lease.token);
        expect(renewed.expiresAt).toBeGreaterThan(lease.expiresAt);
        setTimeout(() => void store.leases.release(renewed), 60);
        const waited: Lease = await value(store.leases.acquire("w", "b", { ttlMs: 1_000, waitMs: 3_000 }));
        expect(waited.holder).toBe("b");
        expect(waited.token).toBeGreaterThan(lease.token);
      });

      it("rejects bad lease input", async () => {
        const store = await open();
        expect(await code(store.leases.acquire("a/b", "x", { ttlMs: 10 }))).toBe("invalid_input");
        expect(await code(store.leases.acquire("ok", "", { ttlMs: 10 }))).toBe("invalid_input");
        expect(await code(store.leases.acquire("ok", "x", { ttlMs: 0 }))).toBe("invalid_input");
        expect(await code(store.leases.acquire("ok", "x", {} as never))).toBe("invalid_input");
        expect(await code(store.leases.renew({ name: "ok" } as never))).toBe("invalid_input");
        expect(await code(store.leases.current("../x"))).toBe("invalid_input");
      });
    });

    describe("keys", () => {
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
    });

    describe("instances", () => {
      it("are isolated from each other", async () => {
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

      it("report a clean integrity check and refuse work after close", async () => {
        const store = await open();
        await value(store.docs.put(["d"], 1, { create: true }));
        const report = await value(store.check());
        expect(report.ok).toBe(true);
        expect(report.problems).toEqual([]);
        await store.close();
        expect(await code(store.docs.get(["d"]))).toBe("unavailable");
        expect(["process", "host", "cluster"]).toContain(store.capabilities.scope);
      });
    });
  });
}
