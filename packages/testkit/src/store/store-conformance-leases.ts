import type { Lease } from "@keel/store";
import { expect, it, describe } from "vitest";
import { code, createStoreConformanceHarness, sleep, value, type StoreConformanceTarget } from "./store-conformance-harness.js";

/**
 * The lease rules of DESIGN.md §3: one holder at a time, monotonic tokens, expiry by the store's
 * clock, takeover, and fenced writes that fail with `lease_lost` once their token is not current.
 * Registers one `describe` block; {@link describeStoreConformance} calls it with the others.
 */
export function describeLeaseConformance(target: StoreConformanceTarget): void {
  describe(`store conformance: ${target.name}: leases and fencing`, () => {
    const { open, ttl } = createStoreConformanceHarness(target);
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

    it("ends the wait for a held lease when the signal aborts, taking nothing", async () => {
      const store = await open();
      const held = await value(store.leases.acquire("w", "a", { ttlMs: 60_000 }));
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const started = Date.now();
      expect(await code(store.leases.acquire("w", "b", { ttlMs: 1_000, waitMs: 30_000, signal: controller.signal }))).toBe("aborted");
      expect(Date.now() - started, "answered when the signal aborted, not when the wait ran out").toBeLessThan(10_000);
      expect((await value(store.leases.current("w")))?.holder).toBe(held.holder);
      // Already aborted: no try is made, even for a free lease.
      expect(await code(store.leases.acquire("free", "b", { ttlMs: 1_000, signal: AbortSignal.abort() }))).toBe("aborted");
      expect(await value(store.leases.current("free"))).toBeUndefined();
      expect(await code(store.leases.acquire("free", "b", { ttlMs: 1_000, signal: {} as AbortSignal }))).toBe("invalid_input");
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
}
