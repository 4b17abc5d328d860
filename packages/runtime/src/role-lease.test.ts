import { KeelError, createManualClock } from "@keel/core";
import { createKeel, type Keel, type KeelOptions } from "@keel/runtime";
import { roleLeaseName } from "@keel/sessions/schemas";
import { createMemoryStore, type KeelStore, type LeaseStore } from "@keel/store";
import { afterEach, describe, expect, it } from "vitest";
import { createPausingBackend } from "../../../test/support/runtime-fake-backend.js";
import { expectThrowsKeel } from "../../../test/support/hostile.js";

const LEASE = roleLeaseName("m1", "engineer");
const open: Keel[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
});

function keelOf(options: KeelOptions): Keel {
  const keel = createKeel({ policy: "rolling", ...options });
  open.push(keel);
  return keel;
}

const turn = { missionId: "m1", role: "engineer", prompt: "Add the flag.", objective: "Ship --json" };

describe("createKeel's roleLease option", () => {
  it("gives the role's lease its time to live and renews it every renewIntervalMs", async () => {
    const clock = createManualClock();
    const store = createMemoryStore({ clock });
    const renewals: number[] = [];
    const leases: LeaseStore = { ...store.leases, renew: (lease, options) => (renewals.push(options?.ttlMs ?? -1), store.leases.renew(lease, options)) };
    let heldFor: number | undefined;
    const backend = createPausingBackend(async () => {
      heldFor = ((await store.leases.current(LEASE))._unsafeUnwrap()?.expiresAt ?? 0) - clock.now();
      // Real time for the renewal timer (every 20 ms) to run a few times.
      await new Promise((resolve) => setTimeout(resolve, 250));
    });
    const keel = keelOf({ store: { ...store, leases } as KeelStore, clock, backends: [backend], roleLease: { ttlMs: 5_000, renewIntervalMs: 20 } });
    expect((await keel.runRoleTurn(turn))._unsafeUnwrap().superseded).toBe(false);
    expect(heldFor).toBe(5_000);
    // 250 ms at one renewal per 20 ms: well over the one a default interval (1,666 ms) would make.
    expect(renewals.length).toBeGreaterThanOrEqual(3);
    expect(new Set(renewals)).toEqual(new Set([5_000]));
  });

  it("bounds the wait for a lease another host holds: waitMs 0 answers lease_held and runs nothing", async () => {
    const store = createMemoryStore();
    (await store.leases.acquire(LEASE, "another-host", { ttlMs: 60_000 }))._unsafeUnwrap();
    const backend = createPausingBackend();
    const keel = keelOf({ store, backends: [backend], roleLease: { waitMs: 0 } });
    const started = Date.now();
    const result = await keel.runRoleTurn(turn);
    expect(result._unsafeUnwrapErr().code).toBe("lease_held");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(backend.requests).toHaveLength(0);
  });

  it("refuses bad lease settings at once with invalid_input", () => {
    for (const roleLease of [
      { ttlMs: 50 },
      { ttlMs: 1_000, renewIntervalMs: 1_000 },
      { renewIntervalMs: 30_000 },
      { ttlMs: 1.5 },
      { waitMs: -1 },
      { lingerMs: 2 ** 40 },
      { ttl: 1_000 },
    ]) {
      const error = expectThrowsKeel(() => createKeel({ store: createMemoryStore(), roleLease } as never));
      expect(error).toBeInstanceOf(KeelError);
      expect(error.code).toBe("invalid_input");
    }
  });
});

