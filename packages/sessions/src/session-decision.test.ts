import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Capsule } from "./capsule-schema.js";
import { applyTurnToCapsule, emptyCapsule } from "./capsule-update.js";
import { ROTATION_REASONS, decideSessionAction, type SessionDecisionInput, type TurnConditions } from "./session-decision.js";
import { DEFAULT_SESSION_LIMITS } from "./session-policy.js";

const request: TurnConditions = { backend: { id: "codex", resumable: true }, model: "gpt-5", branch: "main", objectiveRevision: 1 };

function capsuleWith(overrides: Partial<Capsule["counters"]> = {}, thread: Partial<Capsule["thread"]> = {}): Capsule {
  const capsule = emptyCapsule("m1", "engineer", request, 0);
  capsule.thread = { ...capsule.thread, threadId: "t-1", ...thread };
  capsule.counters = { ...capsule.counters, turnsSinceRotation: 1, totalTurns: 1, ...overrides };
  return capsule;
}

const input = (overrides: Partial<SessionDecisionInput>): SessionDecisionInput => ({
  policy: "rolling",
  limits: DEFAULT_SESSION_LIMITS,
  capsule: capsuleWith(),
  request,
  capabilities: { resume: true },
  ...overrides,
});

describe("decideSessionAction", () => {
  it("follows the documented table", () => {
    expect(decideSessionAction(input({ policy: "fresh" }))).toMatchObject({ action: "fresh", reason: "policy_fresh", policy: "fresh" });
    expect(decideSessionAction(input({ policy: "auto", capabilities: { resume: false } }))).toMatchObject({ action: "fresh", reason: "policy_fresh", policy: "fresh" });
    expect(decideSessionAction(input({ policy: "auto" }))).toMatchObject({ action: "resumed", reason: "continuing", policy: "rolling", threadId: "t-1" });
    expect(decideSessionAction(input({ policy: "mission", capabilities: { resume: false } }))).toMatchObject({ action: "fresh", reason: "fresh_only_backend" });
    expect(decideSessionAction(input({ capsule: null }))).toMatchObject({ action: "fresh", reason: "first_turn" });
    expect(decideSessionAction(input({ capsule: capsuleWith({}, { threadId: null }) }))).toMatchObject({ action: "fresh", reason: "first_turn" });
    expect(decideSessionAction(input({ capsule: capsuleWith({ turnsSinceRotation: 6 }) }))).toMatchObject({ action: "rotated", reason: "max_turns" });
    expect(decideSessionAction(input({ capsule: capsuleWith({ turnsSinceRotation: 5 }) }))).toMatchObject({ action: "resumed" });
    expect(decideSessionAction(input({ capsule: capsuleWith({ observedInputTokens: 120_000 }) }))).toMatchObject({ action: "rotated", reason: "max_input_tokens" });
    expect(decideSessionAction(input({ capsule: capsuleWith({ observedInputTokens: 119_999 }) }))).toMatchObject({ action: "resumed" });
  });

  it("rotates on a change of backend, model, branch or objective under mission and rolling", () => {
    for (const policy of ["mission", "rolling"] as const) {
      const changed = (conditions: Partial<TurnConditions>) => decideSessionAction(input({ policy, request: { ...request, ...conditions } }));
      expect(changed({ backend: { id: "claude-code", resumable: true } })).toMatchObject({ action: "rotated", reason: "backend_changed" });
      expect(changed({ model: "gpt-6" })).toMatchObject({ action: "rotated", reason: "model_changed" });
      expect(changed({ branch: "feature" })).toMatchObject({ action: "rotated", reason: "branch_changed" });
      expect(changed({ objectiveRevision: 2 })).toMatchObject({ action: "rotated", reason: "objective_revised" });
    }
  });

  it("never rotates on limits under mission", () => {
    const decision = decideSessionAction(input({ policy: "mission", capsule: capsuleWith({ turnsSinceRotation: 500, observedInputTokens: 10_000_000 }) }));
    expect(decision).toMatchObject({ action: "resumed", reason: "continuing" });
  });
});

const text = fc.string({ maxLength: 8 });
const arbitraryConditions: fc.Arbitrary<TurnConditions> = fc.record({
  backend: fc.record({ id: fc.constantFrom("codex", "claude-code", "pi"), resumable: fc.boolean() }),
  model: fc.option(fc.constantFrom("a", "b"), { nil: null }),
  branch: fc.option(fc.constantFrom("main", "dev"), { nil: null }),
  objectiveRevision: fc.oneof(fc.nat(3), fc.constantFrom("r1", "r2")),
});
const arbitraryCapsule: fc.Arbitrary<Capsule | null> = fc.option(
  fc.record({
    conditions: arbitraryConditions,
    threadId: fc.option(text.filter((value) => value.length > 0), { nil: null }),
    counters: fc.record({
      turnsSinceRotation: fc.nat(20),
      observedInputTokens: fc.nat(300_000),
      rotations: fc.nat(20),
      resumeFailures: fc.nat(5),
      totalTurns: fc.nat(100),
    }),
  }).map(({ conditions, threadId, counters }) => {
    const capsule = emptyCapsule("m1", "engineer", conditions, 0);
    capsule.thread.threadId = threadId;
    capsule.counters = counters;
    return capsule;
  }),
  { nil: null },
);
const arbitraryInput: fc.Arbitrary<SessionDecisionInput> = fc.record({
  policy: fc.constantFrom("fresh", "mission", "rolling", "auto"),
  limits: fc.record({ maxTurns: fc.integer({ min: 1, max: 10 }), maxInputTokens: fc.integer({ min: 1, max: 200_000 }) }),
  capsule: arbitraryCapsule,
  request: arbitraryConditions,
  capabilities: fc.record({ resume: fc.boolean() }),
});

describe("decideSessionAction invariants (property)", () => {
  it("is total and deterministic", () => {
    fc.assert(
      fc.property(arbitraryInput, (decisionInput) => {
        const first = decideSessionAction(decisionInput);
        expect(decideSessionAction(structuredClone(decisionInput))).toEqual(first);
        expect(["fresh", "resumed", "rotated"]).toContain(first.action);
      }),
    );
  });

  it("never resumes on a fresh-only backend, and never under fresh", () => {
    fc.assert(
      fc.property(arbitraryInput, (decisionInput) => {
        const decision = decideSessionAction(decisionInput);
        if (!decisionInput.capabilities.resume || !decisionInput.request.backend.resumable) expect(decision.action).toBe("fresh");
        if (decisionInput.policy === "fresh") expect(decision).toMatchObject({ action: "fresh", reason: "policy_fresh", threadId: null });
      }),
    );
  });

  it("names a rotation reason for every rotation, and resumes only the capsule's thread within the limits", () => {
    fc.assert(
      fc.property(arbitraryInput, (decisionInput) => {
        const decision = decideSessionAction(decisionInput);
        if (decision.action === "rotated") expect(ROTATION_REASONS).toContain(decision.reason);
        else expect(ROTATION_REASONS).not.toContain(decision.reason);
        if (decision.action === "resumed") {
          const capsule = decisionInput.capsule!;
          expect(decision.threadId).toBe(capsule.thread.threadId);
          expect(decision.threadId).not.toBeNull();
          if (decision.policy === "rolling") {
            expect(capsule.counters.turnsSinceRotation).toBeLessThan(decisionInput.limits.maxTurns);
            expect(capsule.counters.observedInputTokens).toBeLessThan(decisionInput.limits.maxInputTokens);
          }
        } else {
          expect(decision.threadId).toBeNull();
        }
      }),
    );
  });

  it("resets the thread counters on rotation and on any new thread; counts rotations and total turns", () => {
    fc.assert(
      fc.property(arbitraryInput, fc.nat(50_000), (decisionInput, inputTokens) => {
        const decision = decideSessionAction(decisionInput);
        const before = decisionInput.capsule;
        const { capsule: after } = applyTurnToCapsule(before, {
          missionId: "m1",
          role: "engineer",
          request: decisionInput.request,
          action: decision.action,
          reason: decision.reason,
          resumeFailed: false,
          result: { threadId: "t-next", inputTokens },
          failure: null,
          at: 1,
        });
        expect(after.counters.totalTurns).toBe((before?.counters.totalTurns ?? 0) + 1);
        if (decision.action === "resumed") {
          expect(after.counters.turnsSinceRotation).toBe(before!.counters.turnsSinceRotation + 1);
          expect(after.counters.observedInputTokens).toBe(before!.counters.observedInputTokens + inputTokens);
          expect(after.counters.rotations).toBe(before!.counters.rotations);
        } else {
          expect(after.counters.turnsSinceRotation).toBe(1);
          expect(after.counters.observedInputTokens).toBe(inputTokens);
          expect(after.counters.rotations).toBe((before?.counters.rotations ?? 0) + (decision.action === "rotated" ? 1 : 0));
        }
      }),
    );
  });
});
