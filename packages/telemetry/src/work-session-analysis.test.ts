import type { KeelEvent } from "@keel/core";
import { describe, expect, it } from "vitest";
import { analyzeWorkSessions, renderWorkSessionReport } from "./index.js";
import { NO_DATA } from "./schemas.js";

const hour = 3_600_000;
const opened = (sessionId: string, at: number, model: string | null = "opus"): KeelEvent =>
  ({ type: "work.session.opened", at, missionId: "m1", role: null, sessionId, model, continued: false }) as KeelEvent;
const turn = (sessionId: string | null, at: number, tokens: number | null, toolCalls: number | null = 1, taskId: string | null = null): KeelEvent =>
  ({ type: "work.session.turn", at, missionId: "m1", role: "engineer", sessionId, model: "opus", usage: null, tokens, toolCalls, wallMs: 1, taskId }) as KeelEvent;
const closed = (sessionId: string, at: number): KeelEvent =>
  ({ type: "work.session.closed", at, missionId: "m1", role: null, sessionId, model: "opus", turns: 0, tasks: 0, tokens: null, toolCalls: 0, activeMinutes: 0, openedAt: 0, closedAt: at }) as KeelEvent;

describe("analyzeWorkSessions", () => {
  it("slices turns by session over each session's own window; turns outside any session stay apart", () => {
    const events = [
      turn(null, 10, 500),
      opened("s1", hour),
      turn("s1", hour + 1, 100, 2, "t1"),
      turn("s1", hour + 2, null, null, "t1"),
      closed("s1", 3 * hour),
      opened("s2", 4 * hour),
      turn("s2", 4 * hour + 1, 40, 3, "t2"),
      turn(null, 5 * hour, null),
    ];
    const analysis = analyzeWorkSessions(events)._unsafeUnwrap();
    expect(analysis.sessions).toMatchObject([
      { sessionId: "s1", state: "closed", turns: 2, tasks: 1, tokens: 100, turnsWithoutUsage: 1, toolCalls: 2, turnsWithoutToolCalls: 1, hours: 2 },
      { sessionId: "s2", state: "open", turns: 1, tasks: 1, tokens: 40, toolCalls: 3, hours: 1 },
    ]);
    expect(analysis.outsideSessions).toEqual({ turns: 2, tokens: 500, turnsWithoutUsage: 1 });
    expect(analysis.thisSession).toMatchObject({ state: "open", session: { sessionId: "s2" } });
    expect(analysis.tokenWindow).toEqual({ requested: 5, sessions: 2, tokens: 140 });
    expect(analyzeWorkSessions(events, { window: 1 })._unsafeUnwrap().tokenWindow).toEqual({ requested: 1, sessions: 1, tokens: 40 });
  });

  it("answers no_session for this session when none is open, and null (no data) for unknown figures, never 0", () => {
    const analysis = analyzeWorkSessions([opened("s1", 0), turn("s1", 1, null, null), closed("s1", 2), turn(null, 3, 70)])._unsafeUnwrap();
    expect(analysis.thisSession).toEqual({ state: "no_session" });
    expect(analysis.sessions[0]).toMatchObject({ tokens: null, toolCalls: null, turnsWithoutToolCalls: 1, turns: 1 });
    expect(analysis.tokenWindow.tokens).toBeNull();
    const text = renderWorkSessionReport(analysis);
    expect(text).toMatch(new RegExp(`^  s1 .* ${NO_DATA} +${NO_DATA} +0$`, "m"));
    expect(text).toContain("this session: no_session");
    expect(text).toContain("outside any session: 1 turns, tokens 70");
    expect(text).not.toContain("without usage");
    const empty = analyzeWorkSessions([])._unsafeUnwrap();
    expect(empty).toMatchObject({ sessions: [], thisSession: { state: "no_session" }, tokenWindow: { sessions: 0, tokens: null } });
    expect(renderWorkSessionReport(empty)).toContain(`${NO_DATA}: no work session was opened`);
    expect(renderWorkSessionReport(empty)).toContain("token window (last 5 sessions): no_session");
  });

  it("counts model mismatches and follows the audit cadence", () => {
    const events = [
      opened("s1", 0),
      { type: "work.session.model_mismatch", at: 1, missionId: "m1", role: "engineer", sessionId: "s1", expected: "opus", actual: "haiku" } as KeelEvent,
      { type: "work.session.audit_due", at: 2, missionId: "m1", closedSinceAudit: 3, every: 3, lastAuditAt: null } as KeelEvent,
    ];
    const due = analyzeWorkSessions(events)._unsafeUnwrap();
    expect(due.sessions[0]!.modelMismatches).toBe(1);
    expect(due.audits).toEqual([{ missionId: "m1", due: true, lastAuditAt: null }]);
    expect(renderWorkSessionReport(due)).toContain("audits due: m1");
    const audited = analyzeWorkSessions([...events, { type: "work.session.audited", at: 3, missionId: "m1", closedSinceAudit: 3, note: null } as KeelEvent])._unsafeUnwrap();
    expect(audited.audits).toEqual([{ missionId: "m1", due: false, lastAuditAt: 3 }]);
  });

  it("counts turns whose model is unknown apart from mismatches; a log written before modelPin reads 0", () => {
    const pinned = (at: number, modelPin: string) => ({ ...turn("s1", at, 1), modelPin }) as KeelEvent;
    const analysis = analyzeWorkSessions([opened("s1", 0), pinned(1, "unknown"), pinned(2, "match"), pinned(3, "unknown"), turn("s1", 4, 1)])._unsafeUnwrap();
    expect(analysis.sessions[0]).toMatchObject({ turns: 4, turnsWithoutModel: 2, modelMismatches: 0 });
    expect(analyzeWorkSessions([opened("s1", 0), pinned(1, "maybe")])._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("rejects a malformed work-session event (a tool-call count that is not a count) and bad options", () => {
    const bad = { ...turn("s1", 1, 5), toolCalls: -1 } as KeelEvent;
    expect(analyzeWorkSessions([bad])._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(analyzeWorkSessions([], { window: 0 })._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
