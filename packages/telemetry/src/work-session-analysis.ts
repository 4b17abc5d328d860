import { validate, type KeelError, type KeelEvent } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";
import { KeelEventSchema } from "./event-schema.js";

/** One work session's figures over its own window, from the recorded events. */
export interface SessionSlice {
  sessionId: string;
  missionId: string;
  /** The role it covers, or `null` (mission-wide). */
  role: string | null;
  /** The pinned model. */
  model: string | null;
  /** `open` when the log has no `work.session.closed` for it. */
  state: "open" | "closed";
  openedAt: number;
  /** When it closed, or `null` while open. */
  closedAt: number | null;
  /** Wall hours of its window (to its close, or to the last event of the log while open). */
  hours: number;
  turns: number;
  /** Distinct declared tasks. */
  tasks: number;
  /** Tokens of its turns that reported usage; `null` when none did ("no data", not 0). */
  tokens: number | null;
  /** Turns whose usage was unknown. */
  turnsWithoutUsage: number;
  /** Tool calls its backends reported; `null` when it had turns and none reported any (unknown, never 0). */
  toolCalls: number | null;
  /** Turns whose backend reported no tool-call count (`toolCalls: null`); above 0, `toolCalls` is a lower bound. */
  turnsWithoutToolCalls: number;
  /** `work.session.model_mismatch` events. */
  modelMismatches: number;
  /** Turns that named no model in a session pinned to one (`modelPin: "unknown"`): model unknown, not a mismatch. */
  turnsWithoutModel: number;
}

/** Turns that ran with no work session open: recorded, and in no session's figures. */
export interface OutsideSessions {
  turns: number;
  /** Their tokens, `null` when none reported usage. */
  tokens: number | null;
  turnsWithoutUsage: number;
}

/** A mission's audit cadence as the log shows it. */
export interface AuditState {
  missionId: string;
  /** True when the last `work.session.audit_due` came after the last `work.session.audited`. */
  due: boolean;
  /** When the last audit was recorded, or `null`. */
  lastAuditAt: number | null;
}

/** The token window over the last N sessions. */
export interface TokenWindow {
  /** Sessions asked for. */
  requested: number;
  /** Sessions in it (fewer when fewer exist). */
  sessions: number;
  /** Tokens over them; `null` when none reported usage, or there is no session. */
  tokens: number | null;
}

/** What {@link analyzeWorkSessions} returns. */
export interface WorkSessionAnalysis {
  /** Every session seen, by opening time. */
  sessions: SessionSlice[];
  /** "This session": the last opened session still open at the end of the log, else `no_session` (never an all-time figure). */
  thisSession: { state: "open"; session: SessionSlice } | { state: "no_session" };
  /** Turns outside any session. */
  outsideSessions: OutsideSessions;
  /** The token window over the last `window` sessions. */
  tokenWindow: TokenWindow;
  /** Audit cadence per mission that has any audit event, by mission id. */
  audits: AuditState[];
}

const OptionsSchema = z.strictObject({ window: z.number().int().positive().max(1000).optional() });

interface Building extends SessionSlice {
  taskIds: Set<string>;
  toolTurns: number;
  knownTools: number;
}

/**
 * Slices recorded events by work session: per session (from its `work.session.opened` to its
 * `work.session.closed`) the turns, tasks, tokens, tool calls, hours and model mismatches; the
 * turns outside any session apart; "this session"; the token window over the last `window`
 * sessions (default 5); and each mission's audit cadence. Unknown stays `null`; a missing
 * session is `no_session`, never 0. Other events are ignored. Pure.
 *
 * @returns the analysis, or `invalid_input` for malformed events or options.
 */
export function analyzeWorkSessions(events: readonly KeelEvent[], options: { window?: number } = {}): Result<WorkSessionAnalysis, KeelError> {
  return validate(OptionsSchema, options, "work-session analysis options").andThen((valid) =>
    validate(z.array(KeelEventSchema), events, "events").map((checked) => analyze(checked, valid.window ?? 5)),
  );
}

function analyze(events: readonly KeelEvent[], window: number): WorkSessionAnalysis {
  const sorted = [...events].sort((left, right) => left.at - right.at);
  const sessions = new Map<string, Building>();
  const outside: OutsideSessions = { turns: 0, tokens: null, turnsWithoutUsage: 0 };
  const audits = new Map<string, { dueAt: number | null; auditedAt: number | null }>();
  const lastAt = sorted.at(-1)?.at ?? 0;
  const audit = (missionId: string) => audits.get(missionId) ?? (audits.set(missionId, { dueAt: null, auditedAt: null }), audits.get(missionId)!);
  for (const event of sorted) {
    if (event.type === "work.session.opened" && !sessions.has(event.sessionId)) {
      sessions.set(event.sessionId, {
        sessionId: event.sessionId,
        missionId: event.missionId,
        role: event.role,
        model: event.model,
        state: "open",
        openedAt: event.at,
        closedAt: null,
        hours: 0,
        turns: 0,
        tasks: 0,
        tokens: null,
        turnsWithoutUsage: 0,
        toolCalls: null,
        turnsWithoutToolCalls: 0,
        modelMismatches: 0,
        turnsWithoutModel: 0,
        taskIds: new Set(),
        toolTurns: 0,
        knownTools: 0,
      });
    } else if (event.type === "work.session.turn") {
      const session = event.sessionId === null ? undefined : sessions.get(event.sessionId);
      const target = session ?? outside;
      target.turns++;
      if (event.tokens === null) target.turnsWithoutUsage++;
      else target.tokens = (target.tokens ?? 0) + event.tokens;
      if (session) {
        if (event.taskId !== null) session.taskIds.add(event.taskId);
        if (event.modelPin === "unknown") session.turnsWithoutModel++;
        if (event.toolCalls !== null) {
          session.toolTurns++;
          session.knownTools += event.toolCalls;
        } else session.turnsWithoutToolCalls++;
      }
    } else if (event.type === "work.session.closed") {
      const session = sessions.get(event.sessionId);
      if (session) {
        session.state = "closed";
        session.closedAt = event.at;
      }
    } else if (event.type === "work.session.model_mismatch") {
      const session = sessions.get(event.sessionId);
      if (session) session.modelMismatches++;
    } else if (event.type === "work.session.audit_due") {
      audit(event.missionId).dueAt = event.at;
    } else if (event.type === "work.session.audited") {
      audit(event.missionId).auditedAt = event.at;
    }
  }
  const slices = [...sessions.values()].map(({ taskIds, toolTurns, knownTools, ...slice }): SessionSlice => {
    const end = slice.closedAt ?? Math.max(lastAt, slice.openedAt);
    return {
      ...slice,
      hours: (end - slice.openedAt) / 3_600_000,
      tasks: taskIds.size,
      // No turns: truly nothing used. Turns with no usage or no tool counts reported: unknown.
      tokens: slice.turns === 0 ? 0 : slice.tokens,
      toolCalls: slice.turns === 0 ? 0 : toolTurns === 0 ? null : knownTools,
    };
  });
  const open = slices.filter((slice) => slice.state === "open");
  const windowed = slices.slice(-window);
  const known = windowed.filter((slice) => slice.tokens !== null);
  return {
    sessions: slices,
    thisSession: open.length > 0 ? { state: "open", session: open.at(-1)! } : { state: "no_session" },
    outsideSessions: outside,
    tokenWindow: {
      requested: window,
      sessions: windowed.length,
      tokens: known.length === 0 ? null : known.reduce((sum, slice) => sum + slice.tokens!, 0),
    },
    audits: [...audits]
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
      .map(([missionId, state]) => ({
        missionId,
        due: state.dueAt !== null && (state.auditedAt === null || state.dueAt > state.auditedAt),
        lastAuditAt: state.auditedAt,
      })),
  };
}
