import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newSessionRecord, usageTokens, withActivity, withTurn, type WorkSessionTurn } from "./work-session-record.js";
import { metricsOf } from "./work-session-metrics.js";
import { DEFAULT_WORK_SESSION_LIMITS, statusOf, viewOf } from "./work-session-status.js";

const minute = 60_000;
const usage = (input: number | null, output: number | null) => ({ inputUncached: input, cacheRead: null, cacheWrite: null, output, reasoning: null, costUsd: null });

describe("work-session transitions", () => {
  it("counts turn wall time and gaps up to the idle cutoff; an unreported tool count or usage is unknown, not 0", () => {
    let session = newSessionRecord("s1", null, "opus", 0);
    const turn = (startedAt: number, endedAt: number, toolCalls: number | null, tokens: [number | null, number | null] | null): WorkSessionTurn => ({
      startedAt,
      endedAt,
      toolCalls,
      usage: tokens && usage(...tokens),
      model: "opus",
      taskId: null,
    });
    session = withTurn(session, turn(5 * minute, 10 * minute, 3, [100, 10]), 15 * minute); // gap 5 counts
    session = withTurn(session, turn(40 * minute, 42 * minute, null, null), 15 * minute); // gap 30 is idle
    expect(session).toMatchObject({ activeMs: 12 * minute, toolCalls: 3, turnsWithoutToolCalls: 1, tokens: 110, turnsWithoutUsage: 1, turns: 2 });
    const only = withTurn(newSessionRecord("s2", null, "opus", 0), turn(0, 1, null, null), minute);
    expect(viewOf(only)).toMatchObject({ tokens: null, toolCalls: 0, turnsWithoutToolCalls: 1 });
    expect(metricsOf(viewOf(only), 1)).toMatchObject({ tokens: null, toolCalls: null });
    // A session without turns used nothing: a true 0.
    expect(metricsOf(viewOf(newSessionRecord("s3", null, null, 0)), 1)).toMatchObject({ tokens: 0, toolCalls: 0, turns: 0 });
    expect(usageTokens(null)).toBeNull();
    expect(usageTokens(usage(null, null))).toBeNull();
    expect(usageTokens(usage(null, 7))).toBe(7);
  });

  it("property: counters never go down, and sums only what was reported", () => {
    const turnArbitrary = fc.record({
      gap: fc.nat(60 * minute),
      wall: fc.nat(30 * minute),
      toolCalls: fc.option(fc.nat(50), { nil: null }),
      tokens: fc.option(fc.nat(10_000), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(turnArbitrary, { maxLength: 30 }), (turns) => {
        let session = newSessionRecord("s", "engineer", "opus", 0);
        let now = 0;
        for (const entry of turns) {
          const before = session;
          const startedAt = now + entry.gap;
          now = startedAt + entry.wall;
          session = withTurn(session, { startedAt, endedAt: now, toolCalls: entry.toolCalls, usage: entry.tokens === null ? null : usage(entry.tokens, 0), model: "opus", taskId: null }, 15 * minute);
          expect(session.activeMs).toBeGreaterThanOrEqual(before.activeMs + entry.wall);
          expect(session.activeMs).toBeLessThanOrEqual(before.activeMs + entry.wall + Math.min(entry.gap, 15 * minute));
        }
        expect(session.toolCalls).toBe(turns.reduce((sum, entry) => sum + (entry.toolCalls ?? 0), 0));
        expect(session.turnsWithoutToolCalls).toBe(turns.filter((entry) => entry.toolCalls === null).length);
        const reported = turns.filter((entry) => entry.tokens !== null);
        expect(session.tokens).toBe(reported.length === 0 ? null : reported.reduce((sum, entry) => sum + entry.tokens!, 0));
      }),
    );
  });

  it("counts activity outside a turn: the gap up to the idle cutoff and the tool calls, no turn", () => {
    const opened = newSessionRecord("s", "engineer", null, 0);
    const active = withActivity(withActivity(opened, 5 * minute, 2, 10 * minute), 70 * minute, 1, 10 * minute); // 5 counts, 65 is idle
    expect(active).toMatchObject({ activeMs: 5 * minute, lastActivityAt: 70 * minute, toolCalls: 3, checkpointCounter: 3, turns: 0 });
  });

  it("says no_session with no counters at all, and names the limits an open session reached", () => {
    const none = statusOf(undefined, "m1", "engineer", DEFAULT_WORK_SESSION_LIMITS);
    expect(none).toMatchObject({ state: "no_session", session: null, toolCalls: null, activeMinutes: null, exceeded: [], audit: { due: false, closedSinceAudit: 0 } });
    const full = { ...newSessionRecord("s", null, null, 0), toolCalls: 200, activeMs: 180 * minute };
    const doc = { schemaVersion: 1 as const, missionId: "m1", open: [full], closed: [], closedCount: 0, closedSinceAudit: 3, lastAudit: null };
    expect(statusOf(doc, "m1", "engineer", DEFAULT_WORK_SESSION_LIMITS)).toMatchObject({
      state: "open",
      // The capacity gate's counters, at the top as it reads them.
      toolCalls: 200,
      activeMinutes: 180,
      exceeded: ["maxToolCalls", "maxActiveMinutes"],
      audit: { due: true, closedSinceAudit: 3, every: 3 },
    });
  });
});
