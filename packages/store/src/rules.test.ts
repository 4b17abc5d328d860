import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkFence, decideAcquire, decideRelease, decideRenew, type LeaseState } from "./rules.js";

const holders = fc.constantFrom("alice", "bob");
/** A lease state near time 1,000: live, expired or released (`expiresAt` 0), by either holder. */
const states = fc.record({ holder: holders, token: fc.integer({ min: 1, max: 5 }), expiresAt: fc.oneof(fc.constant(0), fc.integer({ min: 990, max: 1_010 })) });
const times = fc.integer({ min: 990, max: 1_010 });

describe("lease rules", () => {
  it("a token's fence passes exactly while no other holder could acquire the lease (at every instant, the boundary included)", () => {
    fc.assert(
      fc.property(states, times, (state: LeaseState, now) => {
        const other = state.holder === "alice" ? "bob" : "alice";
        const fenceOk = checkFence(state, { lease: "l", token: state.token }, now).isOk();
        const takenOver = decideAcquire(state, "l", other, now, 1_000).acquired;
        expect(fenceOk).toBe(!takenOver);
      }),
    );
  });

  it("at its expiry instant a lease is over: the fence fails, renew fails, another holder takes it with the next token", () => {
    const state: LeaseState = { holder: "alice", token: 3, expiresAt: 1_000 };
    const lease = { name: "l", ...state };
    expect(checkFence(state, { lease: "l", token: 3 }, 999).isOk()).toBe(true);
    expect(checkFence(state, { lease: "l", token: 3 }, 1_000)._unsafeUnwrapErr().code).toBe("lease_lost");
    expect(decideRenew(state, lease, 1_000, 500)._unsafeUnwrapErr().code).toBe("lease_lost");
    expect(decideAcquire(state, "l", "bob", 999, 500)).toMatchObject({ acquired: false });
    expect(decideAcquire(state, "l", "bob", 1_000, 500)).toEqual({ acquired: true, lease: { name: "l", holder: "bob", token: 4, expiresAt: 1_500 } });
  });

  it("renew and release act only for the holder and token that hold the lease", () => {
    fc.assert(
      fc.property(states, times, holders, fc.integer({ min: 1, max: 5 }), (state: LeaseState, now, holder, token) => {
        const lease = { name: "l", holder, token, expiresAt: state.expiresAt };
        const owns = holder === state.holder && token === state.token;
        const live = state.expiresAt > now;
        expect(decideRenew(state, lease, now, 100).isOk()).toBe(owns && live);
        const released = decideRelease(state, lease);
        expect(released).toEqual(owns && state.expiresAt !== 0 ? { ...state, expiresAt: 0 } : undefined);
      }),
    );
  });

  it("a renewal keeps the token and moves the expiry from now", () => {
    const state: LeaseState = { holder: "alice", token: 2, expiresAt: 1_000 };
    expect(decideRenew(state, { name: "l", ...state }, 900, 500)._unsafeUnwrap()).toEqual({ name: "l", holder: "alice", token: 2, expiresAt: 1_400 });
  });
});
