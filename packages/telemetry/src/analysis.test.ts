import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { totalInputTokens, type KeelEvent, type RoleSessionTurnEvent, type Usage } from "@keel/core";
import { analyzeEvents, type EventAnalysis } from "@keel/telemetry";
import { EventAnalysisSchema } from "@keel/telemetry/schemas";
import { demoEvents } from "../../../test/support/telemetry-demo-events.js";

const analyze = (events: readonly KeelEvent[]): EventAnalysis => analyzeEvents(events)._unsafeUnwrap();
const policyOf = (analysis: EventAnalysis, policy: string) => {
  const found = analysis.policies.find((entry) => entry.policy === policy);
  if (!found) throw new Error(`no policy ${policy}`);
  return found;
};

describe("analyzeEvents on a scripted demo mission", () => {
  const analysis = analyze(demoEvents());

  it("lists the policies by name with their turns by action and rotations by reason", () => {
    expect(analysis.policies.map((policy) => policy.policy)).toEqual(["fresh", "mission", "rolling"]);
    expect(policyOf(analysis, "fresh")).toMatchObject({ turns: 12, actions: { fresh: 12, resumed: 0, rotated: 0 }, rotations: {} });
    expect(policyOf(analysis, "mission")).toMatchObject({ turns: 12, actions: { fresh: 3, resumed: 9, rotated: 0 } });
    expect(policyOf(analysis, "rolling")).toMatchObject({
      turns: 12,
      actions: { fresh: 3, resumed: 6, rotated: 3 },
      rotations: { max_turns: 3 },
      missions: ["demo-rolling"],
    });
  });

  it("sums prompt bytes in total, per role and for the reviewer (any case) separately", () => {
    const fresh = policyOf(analysis, "fresh");
    expect(fresh.promptBytes).toBe(63_000);
    expect(fresh.reviewerPromptBytes).toBe(21_000);
    expect(fresh.roles.map((role) => [role.role, role.promptBytes])).toEqual([
      ["Reviewer", 21_000],
      ["engineer", 21_000],
      ["planner", 21_000],
    ]);
    expect(policyOf(analysis, "mission").promptBytes).toBe(20_970);
    expect(policyOf(analysis, "rolling").promptBytes).toBe(36_450);
  });

  it("sums observed input tokens with totalInputTokens", () => {
    expect(policyOf(analysis, "fresh").inputTokens).toBe(21_003);
    expect(policyOf(analysis, "mission").inputTokens).toBe(24_993);
    expect(policyOf(analysis, "fresh").turnsWithoutUsage).toBe(0);
  });

  it("counts repeated reads of the same path by the same role in the same mission", () => {
    const mission = policyOf(analysis, "mission");
    expect(mission.reads).toBe(18);
    expect(mission.repeatedReads).toBe(12);
    expect(mission.roles.find((role) => role.role === "engineer")).toMatchObject({ reads: 8, repeatedReads: 6 });
    expect(mission.repeatedReadPaths.map((read) => [read.role, read.path, read.reads])).toEqual([
      ["Reviewer", "src/reviewer.ts", 4],
      ["engineer", "README.md", 4],
      ["engineer", "src/engineer.ts", 4],
      ["planner", "src/planner.ts", 4],
    ]);
  });

  it("builds a per-turn series in time order", () => {
    const rolling = policyOf(analysis, "rolling");
    expect(rolling.series.map((point) => point.index)).toEqual(Array.from({ length: 12 }, (_, index) => index + 1));
    expect(rolling.series[0]).toMatchObject({ role: "planner", turn: 1, action: "fresh", promptBytes: 4_500, inputTokens: 1_500 });
    expect(rolling.series.filter((point) => point.action === "rotated").map((point) => point.rotationReason)).toEqual([
      "max_turns",
      "max_turns",
      "max_turns",
    ]);
  });

  it("matches reviewer verdicts across policies by round number", () => {
    expect(policyOf(analysis, "fresh").verdicts.map((verdict) => verdict.verdict)).toEqual(["revise", "approve", "revise", "approve"]);
    expect(analysis.verdictAgreement).toMatchObject({ matchedRounds: 4, agreeingRounds: 4 });
    const split = analyze(
      demoEvents({ verdict: (policy, round) => (policy === "fresh" && round === 3 ? "Reject" : round % 2 === 0 ? "approve" : "revise") }),
    );
    expect(split.verdictAgreement.agreeingRounds).toBe(3);
    expect(split.verdictAgreement.rounds[2]).toEqual({
      round: 3,
      verdicts: { fresh: "Reject", mission: "revise", rolling: "revise" },
      agree: false,
    });
  });

  it("produces plain data that its own schema accepts and JSON round-trips", () => {
    expect(EventAnalysisSchema.safeParse(analysis).success).toBe(true);
    expect(JSON.parse(JSON.stringify(analysis))).toEqual(analysis);
  });
});

describe("analyzeEvents attribution and input checks", () => {
  const turn = (fields: Partial<RoleSessionTurnEvent>): RoleSessionTurnEvent => ({
    type: "role.session.turn",
    at: 10,
    missionId: "m1",
    role: "engineer",
    policy: "mission",
    action: "fresh",
    rotationReason: "first_turn",
    backend: "scripted",
    model: null,
    promptBytes: 100,
    usage: null,
    wallMs: 1,
    capsulePath: "c",
    threadId: null,
    turn: 1,
    ...fields,
  });
  const read = (at: number, path: string, missionId: string | null = "m1"): KeelEvent => ({
    type: "agent.io.read",
    at,
    role: "engineer",
    missionId,
    path,
    bytes: 1,
    skill: null,
  });

  it("attributes reads of a mission run under two policies to the turn they happened in", () => {
    const analysis = analyze([
      turn({ at: 100, policy: "fresh" }),
      turn({ at: 200, policy: "rolling" }),
      read(50, "a"),
      read(60, "a"),
      read(150, "a"),
      read(250, "b"),
    ]);
    expect(policyOf(analysis, "fresh")).toMatchObject({ reads: 2, repeatedReads: 1 });
    expect(policyOf(analysis, "rolling")).toMatchObject({ reads: 2, repeatedReads: 0 });
  });

  it("does not count reads without a mission with turns, and says how many", () => {
    const analysis = analyze([turn({}), read(1, "a", null), read(2, "a", "elsewhere")]);
    expect(analysis.unattributedEvents).toBe(2);
    expect(analysis.analyzedEvents).toBe(1);
    expect(policyOf(analysis, "mission").reads).toBe(0);
  });

  it("takes a verdict's own policy field before its mission's policy", () => {
    const analysis = analyze([
      turn({}),
      { type: "round.review.completed", at: 20, missionId: "m1", round: 1, verdict: "approve", reviewerPromptBytes: 5 },
      { type: "round.review.completed", at: 20, missionId: "other", round: 1, verdict: "reject", reviewerPromptBytes: 5, policy: "fresh" },
    ]);
    expect(policyOf(analysis, "mission").verdicts).toHaveLength(1);
    expect(policyOf(analysis, "fresh").verdicts[0]?.verdict).toBe("reject");
    expect(analysis.verdictAgreement).toMatchObject({ matchedRounds: 1, agreeingRounds: 0 });
  });

  it("counts turns without usage apart and ignores event types it does not read", () => {
    const analysis = analyze([
      turn({ usage: null }),
      turn({ at: 11, turn: 2, usage: { inputUncached: 7, cacheRead: null, cacheWrite: 3, output: null, reasoning: null, costUsd: null } }),
      { type: "budget.settled", at: 12, scope: "s", dimensions: ["tokens"], amounts: { tokens: 5 }, limitingScope: null },
      { type: "host.custom.thing", at: 13 } as unknown as KeelEvent,
    ]);
    expect(analysis.events).toBe(4);
    expect(policyOf(analysis, "mission")).toMatchObject({ inputTokens: 10, turnsWithoutUsage: 1, turns: 2 });
    expect(policyOf(analysis, "mission").series.map((point) => point.inputTokens)).toEqual([null, 10]);
  });

  it("answers malformed input with invalid_input naming the event", () => {
    const bad = analyzeEvents([turn({}), { ...turn({}), action: "paused" } as unknown as KeelEvent]);
    expect(bad._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(bad._unsafeUnwrapErr().details["issues"]).toEqual([expect.objectContaining({ path: "1.action" })]);
    expect(analyzeEvents("nope" as unknown as KeelEvent[])._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(analyzeEvents([{ type: "x" } as unknown as KeelEvent])._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(analyzeEvents([{ type: "x", at: Number.NaN } as unknown as KeelEvent])._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(analyzeEvents([])._unsafeUnwrap()).toMatchObject({ events: 0, policies: [], verdictAgreement: { matchedRounds: 0 } });
  });
});

const usageArbitrary: fc.Arbitrary<Usage | null> = fc.option(
  fc.record({
    inputUncached: fc.option(fc.nat(50_000), { nil: null }),
    cacheRead: fc.option(fc.nat(50_000), { nil: null }),
    cacheWrite: fc.option(fc.nat(50_000), { nil: null }),
    output: fc.option(fc.nat(5_000), { nil: null }),
    reasoning: fc.constant(null),
    costUsd: fc.constant(null),
  }),
  { nil: null },
);
const missionArbitrary = fc.constantFrom("m1", "m2", "m3");
const roleArbitrary = fc.constantFrom("planner", "engineer", "reviewer", "Reviewer");

const turnArbitrary: fc.Arbitrary<KeelEvent> = fc.record({
  type: fc.constant("role.session.turn" as const),
  at: fc.nat(1_000),
  missionId: missionArbitrary,
  role: roleArbitrary,
  policy: fc.constantFrom("fresh", "mission", "rolling"),
  action: fc.constantFrom("fresh" as const, "resumed" as const, "rotated" as const),
  rotationReason: fc.constantFrom("first_turn", "max_turns", "max_input_tokens", "model_changed"),
  backend: fc.constant("scripted"),
  model: fc.constant(null),
  promptBytes: fc.nat(100_000),
  usage: usageArbitrary,
  wallMs: fc.nat(100),
  capsulePath: fc.constant("c"),
  threadId: fc.constant(null),
  turn: fc.nat(20),
});
const readArbitrary: fc.Arbitrary<KeelEvent> = fc.record({
  type: fc.constant("agent.io.read" as const),
  at: fc.nat(1_000),
  role: roleArbitrary,
  missionId: fc.option(missionArbitrary, { nil: null }),
  path: fc.constantFrom("a.ts", "b.ts", "README.md"),
  bytes: fc.nat(1_000),
  skill: fc.constant(null),
});
const verdictArbitrary: fc.Arbitrary<KeelEvent> = fc.record(
  {
    type: fc.constant("round.review.completed" as const),
    at: fc.nat(1_000),
    missionId: missionArbitrary,
    round: fc.nat(5),
    verdict: fc.constantFrom("approve", "revise", "Approve"),
    reviewerPromptBytes: fc.nat(1_000),
    policy: fc.constantFrom("fresh", "rolling"),
  },
  { requiredKeys: ["type", "at", "missionId", "round", "verdict", "reviewerPromptBytes"] },
);
const eventsArbitrary = fc.array(fc.oneof({ weight: 3, arbitrary: turnArbitrary }, readArbitrary, verdictArbitrary), { maxLength: 60 });

describe("analyzeEvents invariants (property)", () => {
  it("totals equal the sums of the per-role values and of the series", () => {
    fc.assert(
      fc.property(eventsArbitrary, (events) => {
        const analysis = analyze(events);
        for (const policy of analysis.policies) {
          const sum = (pick: (role: (typeof policy.roles)[number]) => number) => policy.roles.reduce((total, role) => total + pick(role), 0);
          expect(policy.turns).toBe(sum((role) => role.turns));
          expect(policy.promptBytes).toBe(sum((role) => role.promptBytes));
          expect(policy.inputTokens).toBe(sum((role) => role.inputTokens));
          expect(policy.reads).toBe(sum((role) => role.reads));
          expect(policy.repeatedReads).toBe(sum((role) => role.repeatedReads));
          expect(policy.reviewerPromptBytes).toBe(
            policy.roles.filter((role) => role.role.toLowerCase() === "reviewer").reduce((total, role) => total + role.promptBytes, 0),
          );
          expect(policy.actions.fresh + policy.actions.resumed + policy.actions.rotated).toBe(policy.turns);
          expect(Object.values(policy.rotations).reduce((total, value) => total + value, 0)).toBe(policy.actions.rotated);
          expect(policy.series).toHaveLength(policy.turns);
          expect(policy.series.reduce((total, point) => total + point.promptBytes, 0)).toBe(policy.promptBytes);
          expect(policy.series.reduce((total, point) => total + (point.inputTokens ?? 0), 0)).toBe(policy.inputTokens);
          expect(policy.repeatedReadPaths.reduce((total, read) => total + read.reads - 1, 0)).toBe(policy.repeatedReads);
        }
        const turns = events.filter((event): event is RoleSessionTurnEvent => event.type === "role.session.turn");
        const observed = turns.reduce((total, event) => total + (totalInputTokens(event.usage) ?? 0), 0);
        expect(analysis.policies.reduce((total, policy) => total + policy.inputTokens, 0)).toBe(observed);
        expect(analysis.analyzedEvents + analysis.unattributedEvents).toBe(
          events.filter((event) => ["role.session.turn", "agent.io.read", "round.review.completed"].includes(event.type)).length,
        );
        expect(EventAnalysisSchema.safeParse(analysis).success).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it("does not depend on the order of the events", () => {
    fc.assert(
      fc.property(
        eventsArbitrary.chain((events) => fc.tuple(fc.constant(events), fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length }))),
        ([events, shuffled]) => {
          expect(analyze(shuffled)).toEqual(analyze(events));
        },
      ),
      { numRuns: 150 },
    );
  });
});
