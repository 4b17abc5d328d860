import { KeelError, createManualClock, type ManualClock } from "@keel/core";
import { createMemoryStore, type KeelStore, type LeaseStore } from "@keel/store";
import { createLeaseKeeper } from "@keel/store/kit";
import { ok, okAsync, type Result } from "neverthrow";
import { afterEach, describe, expect, it, vi } from "vitest";
import { expectThrowsKeel } from "../../../test/support/hostile.js";

afterEach(() => {
  vi.useRealTimers();
});

/** A memory store on a manual clock, whose lease calls are recorded in order. */
function counted(clock: ManualClock = createManualClock()): { store: KeelStore; leases: LeaseStore; calls: string[]; clock: ManualClock } {
  const store = createMemoryStore({ clock });
  const calls: string[] = [];
  const leases: LeaseStore = {
    acquire: (...args) => (calls.push("acquire"), store.leases.acquire(...args)),
    renew: (...args) => (calls.push("renew"), store.leases.renew(...args)),
    release: (...args) => (calls.push("release"), store.leases.release(...args)),
    current: (...args) => (calls.push("current"), store.leases.current(...args)),
  };
  return { store, leases, calls, clock };
}

/** Advances the store's clock and the timers together, in steps the renewal keeps up with. */
async function elapse(clock: ManualClock, ms: number, step = 100): Promise<void> {
  for (let done = 0; done < ms; done += step) {
    clock.advance(step);
    await vi.advanceTimersByTimeAsync(step);
  }
}

describe("createLeaseKeeper", () => {
  it("runs the work under the lease with its fence, then releases it", async () => {
    const { store, leases, calls } = counted();
    const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000 });
    const written = await keeper.run("job", (fence) => store.docs.put(["d"], { n: 1 }, { create: true, fence }));
    expect(written._unsafeUnwrap().version).toBe(1);
    expect(calls).toEqual(["acquire", "release"]);
    expect((await store.leases.current("job"))._unsafeUnwrap()).toBeUndefined();
  });

  it("renews the lease while the work outlives its time to live: no one else can take it", async () => {
    vi.useFakeTimers();
    const { store, leases, clock } = counted();
    const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000 });
    const attempts: string[] = [];
    const result = await keeper.run("job", async (fence) => {
      for (let round = 0; round < 5; round++) {
        await elapse(clock, 1_000);
        const taken = await store.leases.acquire("job", "other", { ttlMs: 1_000 });
        attempts.push(taken.isErr() ? taken.error.code : "acquired");
      }
      return store.docs.put(["d"], { n: 1 }, { create: true, fence });
    });
    expect(attempts).toEqual(["lease_held", "lease_held", "lease_held", "lease_held", "lease_held"]);
    expect(result.isOk()).toBe(true);
  });

  it("renews every renewIntervalMs when given: a stall the default interval loses the lease to is survived", async () => {
    vi.useFakeTimers();
    /** Holds `job` for 900 ms, then stalls 850 ms (the store's clock moves on, the keeper's timers do not) while another holder tries to take it. */
    const stall = async (renewIntervalMs?: number) => {
      const { store, leases, clock } = counted();
      const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000, ...(renewIntervalMs !== undefined ? { renewIntervalMs } : {}) });
      const result = await keeper.run("job", async (fence) => {
        await elapse(clock, 900);
        clock.advance(850);
        const taken = await store.leases.acquire("job", "other", { ttlMs: 1_000 });
        const written = await store.docs.put(["d"], { n: 1 }, { create: true, fence });
        return ok({ taken: taken.isErr() ? taken.error.code : "acquired", written: written.isErr() ? written.error.code : "written" });
      });
      await keeper.close();
      return result._unsafeUnwrap();
    };
    // Default (every 333 ms): last renewed at 700 ms, expired at 1,700 ms, before the stall ends.
    expect(await stall()).toEqual({ taken: "acquired", written: "lease_lost" });
    // Every 100 ms: last renewed at 900 ms, held until 1,900 ms.
    expect(await stall(100)).toEqual({ taken: "lease_held", written: "written" });
  });

  it("answers lease_held without running the work when another holder has it (waitMs 0)", async () => {
    const { store, leases } = counted();
    await store.leases.acquire("job", "other", { ttlMs: 60_000 });
    const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000 });
    let ran = false;
    const result = await keeper.run("job", () => ((ran = true), okAsync(1)));
    expect(result._unsafeUnwrapErr().code).toBe("lease_held");
    expect(ran).toBe(false);
  });

  it("refuses a bad lease name as a result, not a throw", async () => {
    const { leases } = counted();
    const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000 });
    expect((await keeper.run("../x", () => okAsync(1)))._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("reports a lost lease once, stops renewing it, and the old fence writes nothing", async () => {
    vi.useFakeTimers();
    const { store, leases, calls, clock } = counted();
    const lost: [string, string][] = [];
    const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000, onLost: (name, error) => lost.push([name, error.code]) });
    const result = await keeper.run("job", async (fence) => {
      // A stall past the time to live with no timer firing (a blocked host), then a takeover.
      clock.advance(5_000);
      (await store.leases.acquire("job", "other", { ttlMs: 60_000 }))._unsafeUnwrap();
      await vi.advanceTimersByTimeAsync(1_000);
      return store.docs.put(["d"], { n: 1 }, { create: true, fence });
    });
    expect(result._unsafeUnwrapErr().code).toBe("lease_lost");
    expect(lost).toEqual([["job", "lease_lost"]]);
    const renewals = calls.filter((call) => call === "renew").length;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls.filter((call) => call === "renew").length).toBe(renewals);
    // The other holder keeps its lease: a lost lease is not released.
    expect((await store.leases.current("job"))._unsafeUnwrap()?.holder).toBe("other");
  });

  it("isolates a throwing onLost listener", async () => {
    vi.useFakeTimers();
    const { store, leases, clock } = counted();
    const keeper = createLeaseKeeper({
      leases,
      holder: "me",
      ttlMs: 1_000,
      onLost: () => {
        throw new Error("listener bug");
      },
    });
    const result = await keeper.run("job", async () => {
      clock.advance(5_000);
      (await store.leases.acquire("job", "other", { ttlMs: 60_000 }))._unsafeUnwrap();
      await vi.advanceTimersByTimeAsync(1_000);
      return okAsync("done");
    });
    expect(result._unsafeUnwrap()).toBe("done");
  });

  it("keeps the lease for lingerMs: a burst of runs pays one acquisition, close releases it", async () => {
    const { store, leases, calls } = counted();
    const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000, lingerMs: 60_000 });
    for (let run = 0; run < 3; run++) expect((await keeper.run("job", () => okAsync(run)))._unsafeUnwrap()).toBe(run);
    expect(calls).toEqual(["acquire", "current", "current"]);
    expect((await store.leases.acquire("job", "other", { ttlMs: 1_000 }))._unsafeUnwrapErr().code).toBe("lease_held");
    await keeper.close();
    expect(calls.at(-1)).toBe("release");
    expect((await store.leases.acquire("job", "other", { ttlMs: 1_000 })).isOk()).toBe(true);
  });

  it("does not trust a kept lease that was taken over: the next run acquires it again", async () => {
    const { store, leases, clock } = counted();
    const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000, lingerMs: 60_000 });
    (await keeper.run("job", () => okAsync(1)))._unsafeUnwrap();
    clock.advance(5_000);
    (await store.leases.acquire("job", "other", { ttlMs: 60_000 }))._unsafeUnwrap();
    expect((await keeper.run("job", () => okAsync(2)))._unsafeUnwrapErr().code).toBe("lease_held");
    await keeper.close();
  });

  it("queues runs of one name: the second starts after the first ends", async () => {
    const { leases } = counted();
    const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000 });
    const order: string[] = [];
    let finishFirst!: () => void;
    const first = keeper.run("job", async () => {
      order.push("first start");
      await new Promise<void>((resolve) => (finishFirst = resolve));
      order.push("first end");
      return okAsync(1);
    });
    const second = keeper.run("job", () => (order.push("second"), okAsync(2)));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toEqual(["first start"]);
    finishFirst();
    expect([(await first)._unsafeUnwrap(), (await second)._unsafeUnwrap()]).toEqual([1, 2]);
    expect(order).toEqual(["first start", "first end", "second"]);
  });

  it("lets the lease go when the work throws, and rejects", async () => {
    const { store, leases } = counted();
    const keeper = createLeaseKeeper({ leases, holder: "me", ttlMs: 1_000 });
    await expect(
      keeper.run("job", () => {
        throw new Error("bug");
      }),
    ).rejects.toThrow("bug");
    expect((await store.leases.current("job"))._unsafeUnwrap()).toBeUndefined();
    expect((await keeper.run("job", () => okAsync(1)))._unsafeUnwrap()).toBe(1);
  });

  it("throws invalid_input at once for bad options", () => {
    const { leases } = counted();
    for (const options of [
      { leases, holder: "", ttlMs: 1_000 },
      { leases, holder: "me", ttlMs: 0 },
      { leases, holder: "me", ttlMs: 1.5 },
      { leases, holder: "me", ttlMs: 1_000, waitMs: -1 },
      { leases, holder: "me", ttlMs: 1_000, lingerMs: 2 ** 40 },
      { leases, holder: "me", ttlMs: 1_000, renewIntervalMs: 1_000 },
      { leases, holder: "me", ttlMs: 1_000, renewIntervalMs: 0 },
      { leases: {}, holder: "me", ttlMs: 1_000 },
      { leases, holder: "me", ttlMs: 1_000, extra: true },
    ]) {
      const error = expectThrowsKeel(() => createLeaseKeeper(options as never));
      expect(error).toBeInstanceOf(KeelError);
    }
  });
});

describe("cancelling the wait for a lease", () => {
  it("ends a store's acquire at once when the signal aborts, taking nothing", async () => {
    const store = createMemoryStore();
    const held = (await store.leases.acquire("role", "other-host", { ttlMs: 60_000 }))._unsafeUnwrap();
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error("user pressed stop")), 40);
    const waited = await store.leases.acquire("role", "me", { ttlMs: 60_000, waitMs: 60_000, signal: controller.signal });
    expect(waited._unsafeUnwrapErr()).toBeInstanceOf(KeelError);
    expect(waited._unsafeUnwrapErr().code).toBe("aborted");
    expect(waited._unsafeUnwrapErr().cause).toEqual(new Error("user pressed stop"));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await store.leases.current("role"))._unsafeUnwrap()).toEqual(held);
  });

  it("makes no try at all with a signal already aborted, and refuses a signal that is not one", async () => {
    const store = createMemoryStore();
    const aborted = await store.leases.acquire("free", "me", { ttlMs: 1_000, signal: AbortSignal.abort() });
    expect(aborted._unsafeUnwrapErr().code).toBe("aborted");
    expect((await store.leases.current("free"))._unsafeUnwrap()).toBeUndefined();
    const bad = await store.leases.acquire("free", "me", { ttlMs: 1_000, signal: { aborted: false } as unknown as AbortSignal });
    expect(bad._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("answers a run aborted behind this keeper's own run of the name at once; its work never runs", async () => {
    const store = createMemoryStore();
    const keeper = createLeaseKeeper({ leases: store.leases, holder: "keeper", ttlMs: 60_000, waitMs: 60_000 });
    let releaseFirst!: () => void;
    const first = keeper.run("role", () => new Promise<Result<string, KeelError>>((resolve) => (releaseFirst = () => resolve(ok("first")))));
    const controller = new AbortController();
    let secondRan = false;
    const second = keeper.run("role", async () => ((secondRan = true), ok("second")), { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    expect((await second)._unsafeUnwrapErr().code).toBe("aborted");
    releaseFirst();
    expect((await first)._unsafeUnwrap()).toBe("first");
    await keeper.close();
    expect(secondRan).toBe(false);
    expect((await store.leases.current("role"))._unsafeUnwrap()).toBeUndefined();
  });

  it("answers a run aborted while another holder has the lease at once, and holds nothing after", async () => {
    const store = createMemoryStore();
    const other = (await store.leases.acquire("role", "other-host", { ttlMs: 60_000 }))._unsafeUnwrap();
    const keeper = createLeaseKeeper({ leases: store.leases, holder: "keeper", ttlMs: 60_000, waitMs: 60_000 });
    const controller = new AbortController();
    let ran = false;
    const started = Date.now();
    setTimeout(() => controller.abort(), 40);
    const result = await keeper.run("role", async () => ((ran = true), ok(1)), { signal: controller.signal });
    expect(result._unsafeUnwrapErr().code).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(ran).toBe(false);
    (await store.leases.release(other))._unsafeUnwrap();
    // The keeper neither took the lease late nor keeps polling for it: a new holder takes it at once.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect((await store.leases.current("role"))._unsafeUnwrap()).toBeUndefined();
    await keeper.close();
  });

  it("lets work that has started heed the signal itself", async () => {
    const store = createMemoryStore();
    const keeper = createLeaseKeeper({ leases: store.leases, holder: "keeper", ttlMs: 60_000 });
    const controller = new AbortController();
    const result = await keeper.run(
      "role",
      async () => {
        controller.abort();
        await new Promise((resolve) => setTimeout(resolve, 10));
        return ok("finished");
      },
      { signal: controller.signal },
    );
    expect(result._unsafeUnwrap()).toBe("finished");
    expect((await store.leases.current("role"))._unsafeUnwrap()).toBeUndefined();
  });
});
