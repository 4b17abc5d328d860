import { describe, expect, it } from "vitest";
import type { KeelEvent } from "@keel/core";
import { analyzeEvents, reportHeadline, type EventAnalysis } from "@keel/telemetry";
import { listNames, percentLess } from "./internal/report-headline.js";
import { demoEvents } from "../../../test/support/telemetry-demo-events.js";

const analysisOf = (events: readonly KeelEvent[]): EventAnalysis => analyzeEvents(events)._unsafeUnwrap();
const headline = (events: readonly KeelEvent[]): string => reportHeadline(analysisOf(events))._unsafeUnwrap();

describe("reportHeadline", () => {
  it("names the cheapest policy per measure, by how much, and what the sessions did", () => {
    // The demo: 4 rounds of 3 roles per policy. A fresh turn sends 4,000 + 500 × round bytes and
    // ceil(bytes / 3) input tokens; a resumed turn 800 + 10 × round bytes and ceil(bytes / 3)
    // + 2,000 cached tokens. fresh: 3 × (4,500 + 5,000 + 5,500 + 6,000) = 63,000 bytes and
    // 3 × (1,500 + 1,667 + 1,834 + 2,000) = 21,003 tokens; mission (fresh once, then resumed):
    // 3 × (4,500 + 820 + 830 + 840) = 20,970 bytes and 3 × (1,500 + 2,274 + 2,277 + 2,280) =
    // 24,993 tokens. 21,003 / 24,993 is 84 %: 16 % fewer; 20,970 / 63,000: 67 % fewer.
    const text = headline(demoEvents());
    expect(text).toBe(
      "3 policies compared over 36 turns. " +
        "Input tokens: fresh used the fewest, 21,003, 16% fewer than mission (24,993). " +
        "Prompt bytes: mission sent the fewest, 20,970, 67% fewer than fresh (63,000). " +
        "Sessions: fresh started a new session on every turn; rolling rotated 3 times (max_turns 3); mission never rotated. " +
        "Verdicts: the reviewer gave the same verdict under every policy on all 4 matched rounds, so the policy did not change what it concluded.",
    );
  });

  it("names the rounds on which the verdicts differ", () => {
    const text = headline(demoEvents({ verdict: (policy, round) => (policy === "rolling" && round >= 3 ? "reject" : "approve") }));
    expect(text).toContain(
      "Verdicts: the reviewer's verdict differed between policies on 2 of 4 matched rounds (rounds 3 and 4), so the policy changed what it concluded.",
    );
  });

  it("compares per turn when the policies measured different numbers of turns", () => {
    // mission's planner reports no usage: mission measured 8 turns, fresh 12. fresh averages
    // 21,003 / 12 = 1,750 tokens; mission 24,993 − (1,500 + 2,274 + 2,277 + 2,280) = 16,662 over
    // 8 turns = 2,083: 16 % fewer for fresh.
    const events = demoEvents({ policies: ["fresh", "mission"] }).map((event) =>
      event.type === "role.session.turn" && event.policy === "mission" && event.role === "planner" ? { ...event, usage: null } : event,
    );
    const text = headline(events);
    expect(text).toContain("Input tokens per turn: fresh used the fewest, 1,750 on average, 16% fewer than mission (2,083 on average). 4 turns without usage are left out.");
    expect(text).toContain("Prompt bytes: mission sent the fewest");
  });

  it("leaves out a policy that reported no usage at all, and says so", () => {
    const events = demoEvents().map((event) => (event.type === "role.session.turn" && event.policy === "rolling" ? { ...event, usage: null } : event));
    expect(headline(events)).toContain("Input tokens: fresh used the fewest, 21,003, 16% fewer than mission (24,993). rolling reported no usage and is left out.");
    const none = demoEvents({ policies: ["fresh", "mission"] }).map((event) => (event.type === "role.session.turn" ? { ...event, usage: null } : event));
    expect(headline(none)).toContain("Input tokens: no backend reported usage, so they cannot be compared.");
  });

  it("says when policies tie, and names who read files again", () => {
    const text = headline(demoEvents({ policies: ["a", "b"] }));
    // Two policies that behave the same (neither is `fresh` or `rolling`): equal on every measure.
    expect(text).toContain("Input tokens: every policy used the same (24,993).");
    expect(text).toContain("Prompt bytes: every policy sent the same (20,970).");
    expect(text).toContain("Sessions: a and b never rotated.");
    expect(text).not.toContain("Repeated reads");
    // The demo repeats 12 reads per policy; one more planner read of README.md in b's mission.
    const extraReads = [
      ...demoEvents({ policies: ["a", "b"] }),
      { type: "agent.io.read", at: 1_700_000_000_500, role: "planner", missionId: "demo-b", path: "README.md", bytes: 10, skill: null } as KeelEvent,
    ];
    expect(headline(extraReads)).toContain("Repeated reads: b read a file it had already read 13 times, against 12 under a.");
  });

  it("does not call a first turn's new session a choice", () => {
    // One round: every role's only turn is fresh under any policy.
    expect(headline(demoEvents({ rounds: 1 }))).toContain("Sessions: fresh, mission and rolling never rotated.");
  });

  it("sums up a single policy and says when there is nothing to compare", () => {
    expect(headline(demoEvents({ policies: ["rolling"] }))).toBe(
      "One policy was recorded, rolling: 12 turns, 36,450 prompt bytes, 24,153 input tokens, 3 rotations. Run a second policy to compare.",
    );
    expect(headline([])).toBe("No role turns were recorded, so there is nothing to compare.");
  });

  it("answers a malformed analysis with invalid_input", () => {
    expect(reportHeadline({ policies: 1 } as never)._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

describe("headline helpers", () => {
  it("lists names in prose", () => {
    expect([[], ["a"], ["a", "b"], ["a", "b", "c"]].map(listNames)).toEqual(["", "a", "a and b", "a, b and c"]);
  });

  it("gives the percentage by which the low value undercuts the high one", () => {
    expect(percentLess(21_003, 24_993)).toBe("16%");
    expect(percentLess(999, 1_000)).toBe("<1%");
    expect(percentLess(0, 10)).toBe("100%");
    expect(percentLess(0, 0)).toBe("0%");
  });
});
