import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideContinue, decideInterrupted, findInterruptedWork } from "./run-handoff.js";
import { callHash, decideReplay } from "./run-journal.js";
import type { RunDoc } from "./schemas.js";

const run = (extra: Partial<RunDoc> = {}): RunDoc => ({ runId: "r1", version: 3, createdAt: 1000, callIndex: 2, status: "ready", outcome: null, ...extra }) as RunDoc;

describe("interrupted work: the pure decisions", () => {
  it("only unreported reservations made since the run began are interrupted work; journaled calls alone are not", () => {
    expect(findInterruptedWork(run(), [], [0, 1, 2, 3])._unsafeUnwrap()).toBeUndefined();
    expect(findInterruptedWork(run(), [{ id: "before", reservedAt: 999 }], [])._unsafeUnwrap()).toBeUndefined();
    expect(findInterruptedWork(run({ interruptedReservations: ["old"] }), [{ id: "old", reservedAt: 1500 }], [])._unsafeUnwrap()).toBeUndefined();
    expect(findInterruptedWork(run(), [{ id: "open", reservedAt: 1500 }], [0, 1, 2, 3])._unsafeUnwrap()).toEqual({ reservations: ["open"], journaledCalls: 2, fromCallIndex: 2 });
    expect(findInterruptedWork(run(), "nope" as never, [])._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("a handoff keeps the committed run, names the stage and remembers the reservations; only it can be continued", () => {
    const work = { reservations: ["open"], journaledCalls: 1, fromCallIndex: 2 };
    const handedOff = decideInterrupted(run(), { stage: "plan", skill: "plan", work, at: 2000 })._unsafeUnwrap();
    expect(handedOff).toMatchObject({ version: 4, status: "handed_off", callIndex: 2, interruptedReservations: ["open"], outcome: { reason: "interrupted", details: { stage: "plan", openReservations: 1 } } });
    expect(handedOff.outcome!.message).toContain('stage "plan"');
    expect(findInterruptedWork(handedOff, [{ id: "open", reservedAt: 1500 }], [2])._unsafeUnwrap()).toBeUndefined();
    expect(decideContinue(handedOff, true)._unsafeUnwrap()).toMatchObject({ status: "ready", outcome: null, version: 4 });
    expect(decideContinue(handedOff, false)._unsafeUnwrap()).toBe(handedOff);
    expect(decideContinue(run(), true)._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "not_interrupted" } });
    const budget = run({ status: "handed_off", outcome: { reason: "budget_exceeded", message: "", details: {} } });
    expect(decideContinue(budget, true)._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "not_interrupted" } });
    expect(decideInterrupted(run(), { stage: "", skill: "plan", work, at: 1 } as never)._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("with a digests journal, journaled calls are interrupted work too: they cannot replay, so running them again pays again", () => {
    expect(findInterruptedWork(run(), [], [2, 3], { journaledCallsReplay: false })._unsafeUnwrap()).toEqual({ reservations: [], journaledCalls: 2, fromCallIndex: 2 });
    expect(findInterruptedWork(run(), [], [0, 1], { journaledCallsReplay: false })._unsafeUnwrap()).toBeUndefined();
    const call = { stage: "explore", skill: "explore", model: "m", attempt: 1, promptDigest: "sha256:x" };
    const held = { callIndex: 0, hash: callHash(call), call, result: { ok: true as const, text: "", textDigest: "sha256:y", tokens: null, costMicroUsd: null, durationMs: 1 } };
    expect(decideReplay(call, held, true, "pause")).toEqual({ kind: "live", reason: "not_retained" });
  });

  it("property: a reported reservation is never reported again", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 6 }), fc.array(fc.nat(10), { maxLength: 6 }), (ids, journal) => {
        const reservations = ids.map((id) => ({ id, reservedAt: 1000 }));
        const found = findInterruptedWork(run(), reservations, journal)._unsafeUnwrap();
        if (!found) return ids.length === 0;
        const next = decideInterrupted(run(), { stage: "s", skill: "k", work: found, at: 1 })._unsafeUnwrap();
        return findInterruptedWork(next, reservations, journal)._unsafeUnwrap() === undefined;
      }),
    );
  });
});
