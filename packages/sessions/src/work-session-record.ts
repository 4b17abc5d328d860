import { KeelError, type Usage } from "@keel/core";
import type { Doc } from "@keel/store";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { keyText } from "./session-keys.js";
import { decideModelPin } from "./work-session-model.js";

/*
 * A mission's work sessions live in one document, `["missions", missionId, "work-sessions"]`:
 * the sessions open now (at most one per scope: the mission as a whole, or one role), the last
 * closed ones (bounded), and the audit cadence. Every change is a pure transition over this
 * record, written back by compare-and-swap, so two processes never lose each other's counts and
 * every process reads the same state from the store.
 */

/** The work-session document format version. */
export const WORK_SESSION_SCHEMA_VERSION = 1;

/** How many closed sessions the document keeps (the oldest are dropped; `closedCount` keeps counting). */
export const WORK_SESSION_HISTORY = 100;

/** How many distinct task ids one session remembers (more are counted in `tasksOverflow`). */
export const WORK_SESSION_MAX_TASK_IDS = 256;

/** The store key of a mission's work sessions: `["missions", missionId, "work-sessions"]`. */
export function workSessionKey(missionId: string): string[] {
  return ["missions", missionId, "work-sessions"];
}

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const nullableCount = count.nullable();
const name = z.string().min(1).max(256);

const SessionFields = {
  sessionId: z.string().min(1).max(128),
  role: z.string().min(1).max(128).nullable(),
  model: name.nullable(),
  openedAt: count,
  lastActivityAt: count,
  activeMs: count,
  toolCalls: count,
  turnsWithoutToolCalls: count,
  checkpointCounter: count,
  checkpoints: count,
  turns: count,
  taskIds: z.array(z.string().min(1).max(256)).max(WORK_SESSION_MAX_TASK_IDS),
  tasksOverflow: count,
  tokens: nullableCount,
  turnsWithoutUsage: count,
  modelMismatches: count,
  lastMismatchModel: name.nullable(),
  /** Turns that named no model in a session pinned to one (absent in documents written before it: 0). */
  turnsWithoutModel: count.default(0),
};

/** zod schema of an open work session as stored (strict). */
export const WorkSessionRecordSchema = z.strictObject(SessionFields);
/** zod schema of a closed work session as stored (strict): an open one with `closedAt`. */
export const ClosedWorkSessionRecordSchema = z.strictObject({ ...SessionFields, closedAt: count });

/** zod schema of the mission's work-session document. */
export const WorkSessionsDocSchema = z.strictObject({
  schemaVersion: z.literal(WORK_SESSION_SCHEMA_VERSION),
  missionId: z.string().min(1).max(128),
  open: z.array(WorkSessionRecordSchema).max(1024),
  closed: z.array(ClosedWorkSessionRecordSchema).max(WORK_SESSION_HISTORY),
  closedCount: count,
  closedSinceAudit: count,
  lastAudit: z.strictObject({ at: count, note: z.string().max(4096).nullable() }).nullable(),
});

/** An open work session as stored. */
export type WorkSessionRecord = z.infer<typeof WorkSessionRecordSchema>;
/** A closed work session as stored. */
export type ClosedWorkSessionRecord = z.infer<typeof ClosedWorkSessionRecordSchema>;
/** A mission's work-session document. */
export type WorkSessionsDoc = z.infer<typeof WorkSessionsDocSchema>;

/** Parses the stored document: `undefined` when none, `corrupt` when invalid or another mission's. */
export function parseWorkSessionsDoc(doc: Doc | undefined, missionId: string): Result<WorkSessionsDoc | undefined, KeelError> {
  if (!doc) return ok(undefined);
  const parsed = WorkSessionsDocSchema.safeParse(doc.value);
  if (!parsed.success || parsed.data.missionId !== missionId) {
    const location = keyText(workSessionKey(missionId));
    return err(new KeelError("corrupt", `the work sessions at ${location} are not valid work sessions of mission "${missionId}"`, { details: { location } }));
  }
  return ok(parsed.data);
}

/** An empty document for a mission. */
export function emptyWorkSessionsDoc(missionId: string): WorkSessionsDoc {
  return { schemaVersion: WORK_SESSION_SCHEMA_VERSION, missionId, open: [], closed: [], closedCount: 0, closedSinceAudit: 0, lastAudit: null };
}

/** The open session of a scope (`role` null: the mission-wide one). */
export function openSessionOf(doc: WorkSessionsDoc | undefined, role: string | null): WorkSessionRecord | undefined {
  return doc?.open.find((session) => session.role === role);
}

/**
 * The session a turn of `role` counts in: the role's own open session, else the mission-wide one,
 * else none.
 */
export function sessionForRole(doc: WorkSessionsDoc | undefined, role: string | null): WorkSessionRecord | undefined {
  return (role !== null ? openSessionOf(doc, role) : undefined) ?? openSessionOf(doc, null);
}

/** A newly opened session. */
export function newSessionRecord(sessionId: string, role: string | null, model: string | null, now: number): WorkSessionRecord {
  return {
    sessionId,
    role,
    model,
    openedAt: now,
    lastActivityAt: now,
    activeMs: 0,
    toolCalls: 0,
    turnsWithoutToolCalls: 0,
    checkpointCounter: 0,
    checkpoints: 0,
    turns: 0,
    taskIds: [],
    tasksOverflow: 0,
    tokens: null,
    turnsWithoutUsage: 0,
    modelMismatches: 0,
    lastMismatchModel: null,
    turnsWithoutModel: 0,
  };
}

/** One finished turn, as a work session counts it. */
export interface WorkSessionTurn {
  /** When the turn started, epoch ms. */
  startedAt: number;
  /** When it ended, epoch ms. */
  endedAt: number;
  /** The backend's tool calls, or `null` when the backend did not report them (never counted as 0). */
  toolCalls: number | null;
  /** The turn's usage, or `null` when unknown. */
  usage: Usage | null;
  /** The model the turn named (`null`: none, the backend's default ran). */
  model: string | null;
  /** The declared task, if any. */
  taskId: string | null;
}

/** Tokens of a usage (input of every kind plus output), or `null` when no bucket is known. */
export function usageTokens(usage: Usage | null): number | null {
  if (!usage) return null;
  const parts = [usage.inputUncached, usage.cacheRead, usage.cacheWrite, usage.output];
  if (parts.every((part) => part === null)) return null;
  return parts.reduce<number>((sum, part) => sum + (part ?? 0), 0);
}

/**
 * Counts a turn in a session: its wall time is active, and so is the gap since the last activity
 * unless it is longer than `idleMs`; tool calls add to the counter and the checkpoint counter
 * (an unreported count is remembered as such, never added as 0); tokens add only when known; the
 * model is checked against the pin by {@link decideModelPin} (a turn naming none is counted in
 * `turnsWithoutModel`, never as a mismatch).
 */
export function withTurn(session: WorkSessionRecord, turn: WorkSessionTurn, idleMs: number): WorkSessionRecord {
  const wall = Math.max(0, turn.endedAt - turn.startedAt);
  const gap = turn.startedAt - session.lastActivityAt;
  const counted = gap > 0 && gap <= idleMs ? gap : 0;
  const tokens = usageTokens(turn.usage);
  const known = turn.taskId === null || session.taskIds.includes(turn.taskId);
  const roomForTask = session.taskIds.length < WORK_SESSION_MAX_TASK_IDS;
  const pin = decideModelPin(session.model, turn.model);
  const mismatch = pin === "mismatch";
  return {
    ...session,
    activeMs: session.activeMs + wall + counted,
    lastActivityAt: Math.max(session.lastActivityAt, turn.endedAt),
    toolCalls: session.toolCalls + (turn.toolCalls ?? 0),
    turnsWithoutToolCalls: session.turnsWithoutToolCalls + (turn.toolCalls === null ? 1 : 0),
    checkpointCounter: session.checkpointCounter + (turn.toolCalls ?? 0),
    turns: session.turns + 1,
    taskIds: known || !roomForTask ? session.taskIds : [...session.taskIds, turn.taskId!],
    tasksOverflow: session.tasksOverflow + (!known && !roomForTask ? 1 : 0),
    tokens: tokens === null ? session.tokens : (session.tokens ?? 0) + tokens,
    turnsWithoutUsage: session.turnsWithoutUsage + (tokens === null ? 1 : 0),
    modelMismatches: session.modelMismatches + (mismatch ? 1 : 0),
    lastMismatchModel: mismatch ? turn.model : session.lastMismatchModel,
    turnsWithoutModel: session.turnsWithoutModel + (pin === "unknown" ? 1 : 0),
  };
}

/**
 * Counts activity at `at` outside a turn (the deprecated `createHygiene`'s `recordActivity`): the
 * gap since the last activity is active unless it is longer than `idleMs`, and `toolCalls` add
 * to the tool calls and the checkpoint counter. No turn is counted.
 */
export function withActivity(session: WorkSessionRecord, at: number, toolCalls: number, idleMs: number): WorkSessionRecord {
  const gap = at - session.lastActivityAt;
  return {
    ...session,
    activeMs: session.activeMs + (gap > 0 && gap <= idleMs ? gap : 0),
    lastActivityAt: Math.max(session.lastActivityAt, at),
    toolCalls: session.toolCalls + toolCalls,
    checkpointCounter: session.checkpointCounter + toolCalls,
  };
}

/** Replaces the open session of `session.role` in the document. */
export function withOpenSession(doc: WorkSessionsDoc, session: WorkSessionRecord): WorkSessionsDoc {
  return { ...doc, open: [...doc.open.filter((entry) => entry.role !== session.role), session] };
}

/** Closes the open session of `role` at `now`, keeping the last {@link WORK_SESSION_HISTORY} closed ones. */
export function withClosedSession(doc: WorkSessionsDoc, session: WorkSessionRecord, now: number): WorkSessionsDoc {
  const closed: ClosedWorkSessionRecord = { ...session, closedAt: Math.max(now, session.openedAt) };
  return {
    ...doc,
    open: doc.open.filter((entry) => entry.role !== session.role),
    closed: [...doc.closed, closed].slice(-WORK_SESSION_HISTORY),
    closedCount: doc.closedCount + 1,
    closedSinceAudit: doc.closedSinceAudit + 1,
  };
}
