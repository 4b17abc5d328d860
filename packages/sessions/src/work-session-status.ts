import { sessionForRole, type ClosedWorkSessionRecord, type WorkSessionRecord, type WorkSessionsDoc } from "./work-session-record.js";

/** The limits of a work session and its audit cadence. */
export interface WorkSessionLimits {
  /** Tool calls a session may make before budgeted turns are refused (default 200). */
  maxToolCalls: number;
  /** Active minutes a session may last before budgeted turns are refused (default 180). */
  maxActiveMinutes: number;
  /** A gap between two turns longer than this many minutes is idle and does not count (default 15). */
  idleMinutes: number;
  /** Closed sessions after which an audit is due (default 3). */
  auditEvery: number;
}

/** The default work-session limits: 200 tool calls, 180 active minutes, idle after 15 minutes, an audit every 3 sessions. */
export const DEFAULT_WORK_SESSION_LIMITS: Readonly<WorkSessionLimits> = Object.freeze({
  maxToolCalls: 200,
  maxActiveMinutes: 180,
  idleMinutes: 15,
  auditEvery: 3,
});

/** A work-session limit that has been reached. */
export type WorkSessionLimitName = "maxToolCalls" | "maxActiveMinutes";

/** One work session (open or closed) as callers see it. */
export interface WorkSessionView {
  /** The session's id. */
  sessionId: string;
  /** `mission`: opened for the whole mission; `role`: for one role. */
  scope: "mission" | "role";
  /** The role it was opened for, or `null` for a mission-wide session. */
  role: string | null;
  /** The model it was opened with (pinned), or `null` for the backend's default. */
  model: string | null;
  /** When it was opened, epoch ms. */
  openedAt: number;
  /** When it was closed, epoch ms, or `null` while open. */
  closedAt: number | null;
  /** The last turn's end (or the opening), epoch ms. */
  lastActivityAt: number;
  /** Active minutes: turn wall time plus gaps up to the idle cutoff. */
  activeMinutes: number;
  /** Tool calls the backends reported (a lower bound when `turnsWithoutToolCalls` > 0). */
  toolCalls: number;
  /** Turns whose backend reported no tool calls (not counted as 0 in `toolCalls`: unknown). */
  turnsWithoutToolCalls: number;
  /** Tool calls since the last checkpoint reset, as reported (unknown counts add nothing). */
  checkpointCounter: number;
  /** Checkpoints taken. */
  checkpoints: number;
  /** Turns counted. */
  turns: number;
  /** Distinct declared tasks. */
  tasks: number;
  /** Tokens (input of every kind plus output) of the turns that reported usage; `null` when none did. */
  tokens: number | null;
  /** Turns whose usage was unknown (not in `tokens`). */
  turnsWithoutUsage: number;
  /** Turns that named a model other than the pinned one, and the last such model. */
  modelMismatch: { turns: number; lastModel: string | null };
  /** Turns that named no model in a session pinned to one: their model is unknown (not a mismatch, not a match). */
  turnsWithoutModel: number;
}

/** The audit cadence of a mission. */
export interface WorkSessionAudit {
  /** True when `closedSinceAudit >= every`. */
  due: boolean;
  /** Sessions closed since the last audit (or ever, without one). */
  closedSinceAudit: number;
  /** The cadence. */
  every: number;
  /** When the last audit was recorded, epoch ms, or `null`. */
  lastAuditAt: number | null;
}

/**
 * The work-session state of a mission and role, read from the store. With no open session,
 * `state` is `no_session`, `session` is `null` and the counters are `null`: there are no counters
 * to show, and none is passed off as 0.
 *
 * It is also what the capacity gate of `@keel/budget` reads as it is (its `CapacityStatus`:
 * `state`, `toolCalls`, `turnsWithoutToolCalls`, `activeMinutes`), so
 * `{ status: () => work.status(scope) }` is a gate's `sessions` port.
 */
export interface WorkSessionStatus {
  /** The mission. */
  missionId: string;
  /** The role asked about, or `null` for the mission-wide session. */
  role: string | null;
  /** `open` when a session covers the role (its own, or the mission-wide one), else `no_session`. */
  state: "open" | "no_session";
  /** The covering session, or `null`. */
  session: WorkSessionView | null;
  /**
   * The covering session's reported tool calls (`session.toolCalls`); `null` without one, or
   * when the session has turns and none of their backends reported tool calls (unknown, not 0).
   * With `turnsWithoutToolCalls` > 0 it is a lower bound.
   */
  toolCalls: number | null;
  /** Turns of the covering session whose tool calls are unknown (`session.turnsWithoutToolCalls`), or `null` without one. */
  turnsWithoutToolCalls: number | null;
  /** The covering session's active minutes (`session.activeMinutes`), or `null` without one. */
  activeMinutes: number | null;
  /** The limits in force. */
  limits: WorkSessionLimits;
  /** The limits the open session has reached (empty without one). */
  exceeded: WorkSessionLimitName[];
  /** The mission's audit cadence. */
  audit: WorkSessionAudit;
}

/** A stored session as callers see it. */
export function viewOf(session: WorkSessionRecord | ClosedWorkSessionRecord): WorkSessionView {
  return {
    sessionId: session.sessionId,
    scope: session.role === null ? "mission" : "role",
    role: session.role,
    model: session.model,
    openedAt: session.openedAt,
    closedAt: "closedAt" in session ? session.closedAt : null,
    lastActivityAt: session.lastActivityAt,
    activeMinutes: session.activeMs / 60_000,
    toolCalls: session.toolCalls,
    turnsWithoutToolCalls: session.turnsWithoutToolCalls,
    checkpointCounter: session.checkpointCounter,
    checkpoints: session.checkpoints,
    turns: session.turns,
    tasks: session.taskIds.length + session.tasksOverflow,
    // A session without turns used no tokens: a true 0. With turns and no usage reported: unknown.
    tokens: session.turns === 0 ? 0 : session.tokens,
    turnsWithoutUsage: session.turnsWithoutUsage,
    modelMismatch: { turns: session.modelMismatches, lastModel: session.lastMismatchModel },
    turnsWithoutModel: session.turnsWithoutModel,
  };
}

/** The audit cadence of a document. */
export function auditOf(doc: WorkSessionsDoc | undefined, limits: WorkSessionLimits): WorkSessionAudit {
  const closedSinceAudit = doc?.closedSinceAudit ?? 0;
  return { due: closedSinceAudit >= limits.auditEvery, closedSinceAudit, every: limits.auditEvery, lastAuditAt: doc?.lastAudit?.at ?? null };
}

/** The status of `role` (its own session, else the mission-wide one) in a document. */
export function statusOf(doc: WorkSessionsDoc | undefined, missionId: string, role: string | null, limits: WorkSessionLimits): WorkSessionStatus {
  const session = sessionForRole(doc, role);
  const audit = auditOf(doc, limits);
  if (!session) {
    return { missionId, role, state: "no_session", session: null, toolCalls: null, turnsWithoutToolCalls: null, activeMinutes: null, limits, exceeded: [], audit };
  }
  const view = viewOf(session);
  const exceeded: WorkSessionLimitName[] = [];
  if (view.toolCalls >= limits.maxToolCalls) exceeded.push("maxToolCalls");
  if (view.activeMinutes >= limits.maxActiveMinutes) exceeded.push("maxActiveMinutes");
  // Every turn's count unknown: the session's count is unknown, not the 0 the reported ones add up to.
  const toolCalls = view.turns > 0 && view.turnsWithoutToolCalls === view.turns ? null : view.toolCalls;
  const { turnsWithoutToolCalls, activeMinutes } = view;
  return { missionId, role, state: "open", session: view, toolCalls, turnsWithoutToolCalls, activeMinutes, limits, exceeded, audit };
}
