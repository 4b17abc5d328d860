import { KeelError } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { sessionForRole, type WorkSessionsDoc } from "./work-session-record.js";
import { viewOf, type WorkSessionView } from "./work-session-status.js";

/** The numbers of one work session, over its own window (from its opening to its close, or now). */
export interface WorkSessionMetrics {
  /** The session's id. */
  sessionId: string;
  /** `open` or `closed`. */
  state: "open" | "closed";
  /** The role it was opened for, or `null` (mission-wide). */
  role: string | null;
  /** The pinned model. */
  model: string | null;
  /** Its window: opened at, epoch ms. */
  from: number;
  /** Its window: closed at, or now for an open session, epoch ms. */
  to: number;
  /** Wall hours of the window. */
  hours: number;
  /** Active minutes. */
  activeMinutes: number;
  /** Turns. */
  turns: number;
  /** Distinct declared tasks. */
  tasks: number;
  /** Tokens of the turns that reported usage, `null` when none did (unknown, not 0). */
  tokens: number | null;
  /** Turns whose usage was unknown. */
  turnsWithoutUsage: number;
  /** Tool calls reported, `null` when the session had turns and none reported any. */
  toolCalls: number | null;
  /** Turns that named a model other than the pinned one. */
  modelMismatches: number;
  /** Turns that named no model in a session pinned to one (model unknown, not a mismatch). */
  turnsWithoutModel: number;
}

/** The token window over the last N sessions. */
export interface WorkSessionWindow {
  /** How many sessions were asked for. */
  requested: number;
  /** The sessions in the window, oldest first (fewer than `requested` when fewer exist). */
  sessions: WorkSessionMetrics[];
  /** Tokens over the window's sessions that reported any; `null` when none did. */
  tokens: number | null;
  /** Turns over the window. */
  turns: number;
  /** Distinct tasks over the window (summed per session). */
  tasks: number;
  /** Wall hours over the window. */
  hours: number;
  /** Turns of the window whose usage was unknown. */
  turnsWithoutUsage: number;
}

/** Which sessions a metrics query reads. */
export type WorkSessionSlice = { session: "current" } | { lastSessions: number };

/** The metrics of one session view, its window ending at `now` while open. */
export function metricsOf(view: WorkSessionView, now: number): WorkSessionMetrics {
  const to = view.closedAt ?? Math.max(now, view.openedAt);
  return {
    sessionId: view.sessionId,
    state: view.closedAt === null ? "open" : "closed",
    role: view.role,
    model: view.model,
    from: view.openedAt,
    to,
    hours: (to - view.openedAt) / 3_600_000,
    activeMinutes: view.activeMinutes,
    turns: view.turns,
    tasks: view.tasks,
    tokens: view.tokens,
    turnsWithoutUsage: view.turnsWithoutUsage,
    toolCalls: view.turns > 0 && view.turnsWithoutToolCalls === view.turns ? null : view.toolCalls,
    modelMismatches: view.modelMismatch.turns,
    turnsWithoutModel: view.turnsWithoutModel,
  };
}

function noSession(missionId: string, role: string | null, what: string): KeelError {
  const who = role === null ? `mission "${missionId}"` : `role "${role}" of mission "${missionId}"`;
  return new KeelError("no_session", `${who} has ${what}: call keel.openWorkSession({ missionId, model }) first (no figure is given for a session that does not exist)`, {
    details: { missionId, role, recovery: "openWorkSession" },
  });
}

/**
 * The metrics of "this session" (the open session covering `role`) or of the last N sessions,
 * each over its own window. "This session" with none open is `no_session`, never an all-time
 * figure; a window over a mission that never had a session is `no_session` too.
 */
export function workSessionMetrics(
  doc: WorkSessionsDoc | undefined,
  missionId: string,
  role: string | null,
  slice: WorkSessionSlice,
  now: number,
): Result<WorkSessionMetrics | WorkSessionWindow, KeelError> {
  if ("session" in slice) {
    const current = sessionForRole(doc, role);
    return current ? ok(metricsOf(viewOf(current), now)) : err(noSession(missionId, role, "no open work session"));
  }
  const all = [...(doc?.closed ?? []), ...(doc?.open ?? [])]
    .filter((session) => role === null || session.role === role)
    .sort((left, right) => left.openedAt - right.openedAt);
  if (all.length === 0) return err(noSession(missionId, role, "never had a work session"));
  const sessions = all.slice(-slice.lastSessions).map((session) => metricsOf(viewOf(session), now));
  const known = sessions.filter((session) => session.tokens !== null);
  return ok({
    requested: slice.lastSessions,
    sessions,
    tokens: known.length === 0 ? null : known.reduce((sum, session) => sum + session.tokens!, 0),
    turns: sessions.reduce((sum, session) => sum + session.turns, 0),
    tasks: sessions.reduce((sum, session) => sum + session.tasks, 0),
    hours: sessions.reduce((sum, session) => sum + session.hours, 0),
    turnsWithoutUsage: sessions.reduce((sum, session) => sum + session.turnsWithoutUsage, 0),
  });
}
