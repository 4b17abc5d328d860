import {
  KeelError,
  SafeNameSchema,
  UsageSchema,
  createEventBus,
  newId,
  systemClock,
  validate,
  validateOrThrow,
  type Clock,
  type EventBus,
  type JsonValue,
  type Usage,
} from "@keel/core";
import type { KeelStore } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { z } from "zod";
import { writeHandoffRecord, type Handoff, type HandoffRecord } from "./handoff.js";
import { workSessionMetrics, type WorkSessionMetrics, type WorkSessionSlice, type WorkSessionWindow } from "./work-session-metrics.js";
import {
  emptyWorkSessionsDoc,
  newSessionRecord,
  openSessionOf,
  parseWorkSessionsDoc,
  sessionForRole,
  usageTokens,
  withClosedSession,
  withOpenSession,
  withTurn,
  workSessionKey,
  type WorkSessionsDoc,
} from "./work-session-record.js";
import { DEFAULT_WORK_SESSION_LIMITS, statusOf, viewOf, type WorkSessionLimits, type WorkSessionStatus, type WorkSessionView } from "./work-session-status.js";

/** Options of {@link createWorkSessions}. */
export interface WorkSessionsOptions {
  /** Where the work sessions (and handoffs) live. */
  store: KeelStore;
  /** Receives the `work.session.*` events. Default: a private bus. */
  events?: EventBus;
  /** Default the system clock. */
  clock?: Clock;
  /** Overrides of {@link DEFAULT_WORK_SESSION_LIMITS}. */
  limits?: Partial<WorkSessionLimits>;
}

/** What opens a work session. */
export interface OpenWorkSessionInput {
  /** The mission (a safe name). */
  missionId: string;
  /** The role (a safe name); left out, the session covers every role of the mission. */
  role?: string | null;
  /** The model the session is pinned to (`null`: the backend's default); a turn on another model is a mismatch. */
  model: string | null;
}

/** Names the session of a mission, or of one role of it. */
export interface WorkSessionScope {
  /** The mission (a safe name). */
  missionId: string;
  /** The role (a safe name); left out, the mission-wide session. */
  role?: string | null;
}

/** A finished turn to count, as the runtime reports it. */
export interface RecordTurnInput {
  /** The mission. */
  missionId: string;
  /** The role that ran the turn. */
  role: string;
  /** When the turn started, epoch ms. */
  startedAt: number;
  /** When it ended, epoch ms. */
  endedAt: number;
  /** The backend's tool calls, `null` when it did not report them. */
  toolCalls: number | null;
  /** The turn's usage, `null` when unknown. */
  usage: Usage | null;
  /** The model the turn ran on. */
  model: string | null;
  /** The declared task, if any. */
  taskId?: string | null;
}

/** What {@link WorkSessions.recordTurn} did. */
export interface RecordedTurn {
  /** The session it was counted in, or `null` when none was open (the turn's usage is still in `work.session.turn`). */
  sessionId: string | null;
  /** True when the turn ran on a model other than the session's pinned one. */
  modelMismatch: boolean;
  /** The status after the turn. */
  status: WorkSessionStatus;
}

/** What {@link WorkSessions.close} returns. */
export interface ClosedWorkSessionResult {
  /** The session as it closed. */
  session: WorkSessionView;
  /** The status after closing (`audit.due` says whether an audit is due). */
  status: WorkSessionStatus;
}

/** What {@link WorkSessions.checkpoint} returns. */
export interface WorkSessionCheckpoint {
  /** The handoff as written. */
  handoff: HandoffRecord;
  /** The status after the checkpoint counter was reset. */
  status: WorkSessionStatus;
}

/** Work sessions of missions: hygiene (capacity, checkpoint counter, model pinning, audit cadence) read from the store. */
export interface WorkSessions {
  /** The limits in force. */
  readonly limits: Readonly<WorkSessionLimits>;
  /** Opens a session, or continues the one open for the scope with the same model (`conflict` with another model). */
  open(input: OpenWorkSessionInput): ResultAsync<WorkSessionStatus, KeelError>;
  /** Closes the scope's open session; `no_session` when none is open. */
  close(scope: WorkSessionScope): ResultAsync<ClosedWorkSessionResult, KeelError>;
  /** The status, always read from the store (never from a cache), so every process sees the same. */
  status(scope: WorkSessionScope): ResultAsync<WorkSessionStatus, KeelError>;
  /** Counts a finished turn in the session covering its role; with none, writes nothing and says so. */
  recordTurn(input: RecordTurnInput): ResultAsync<RecordedTurn, KeelError>;
  /**
   * Writes the role's handoff, then resets the checkpoint counter of the session covering the
   * role, in that order. `no_session` (nothing written) when none is open: `writeHandoff` hands
   * off without one. A failed handoff leaves the counter as it was.
   */
  checkpoint(input: { missionId: string; role: string; handoff: Handoff }): ResultAsync<WorkSessionCheckpoint, KeelError>;
  /** Writes a handoff whatever the hygiene state (above all past a limit); resets nothing. */
  writeHandoff(input: { missionId: string; role: string; handoff: Handoff }): ResultAsync<HandoffRecord, KeelError>;
  /** Records an audit of the mission: the audit cadence starts again. */
  recordAudit(input: { missionId: string; note?: string | null }): ResultAsync<WorkSessionStatus, KeelError>;
  /** "This session" (`{ session: "current" }`) or the last N sessions (`{ lastSessions: N }`); see {@link workSessionMetrics}. */
  metrics(input: WorkSessionScope & { slice: WorkSessionSlice }): ResultAsync<WorkSessionMetrics | WorkSessionWindow, KeelError>;
}

const LimitsSchema = z.strictObject({
  maxToolCalls: z.number().int().positive().optional(),
  maxActiveMinutes: z.number().positive().optional(),
  idleMinutes: z.number().positive().optional(),
  auditEvery: z.number().int().positive().optional(),
});

const OptionsSchema = z.strictObject({
  store: z.custom<KeelStore>((value) => typeof (value as KeelStore | undefined)?.docs?.get === "function", "store must be a KeelStore"),
  events: z.custom<EventBus>((value) => typeof (value as EventBus | undefined)?.emit === "function", "events must be an EventBus").optional(),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
  limits: LimitsSchema.optional(),
});

const role = SafeNameSchema.transform(String).nullable().optional();
const model = z.string().min(1).max(256).nullable();
const ScopeSchema = z.strictObject({ missionId: SafeNameSchema.transform(String), role });
const OpenSchema = z.strictObject({ missionId: SafeNameSchema.transform(String), role, model });
const time = z.number().int().nonnegative();
const TurnSchema = z.strictObject({
  missionId: SafeNameSchema.transform(String),
  role: SafeNameSchema.transform(String),
  startedAt: time,
  endedAt: time,
  toolCalls: z.number().int().nonnegative().nullable(),
  usage: UsageSchema.nullable(),
  model,
  taskId: z.string().min(1).max(256).nullable().optional(),
});
const RoleScopeSchema = z.strictObject({ missionId: SafeNameSchema.transform(String), role: SafeNameSchema.transform(String), handoff: z.unknown() });
const AuditSchema = z.strictObject({ missionId: SafeNameSchema.transform(String), note: z.string().max(4096).nullable().optional() });
const SliceSchema = z.union([z.strictObject({ session: z.literal("current") }), z.strictObject({ lastSessions: z.number().int().positive().max(100) })]);
const MetricsSchema = z.strictObject({ missionId: SafeNameSchema.transform(String), role, slice: SliceSchema });

/**
 * Creates the work sessions of missions over a store, at `["missions", missionId, "work-sessions"]`.
 * Continuity is not hygiene: handoffs are always writable; the session counts tool calls and
 * active minutes for the capacity gate, pins a model, and keeps the audit cadence. Every read
 * goes to the store, so a restarted process or another one sees the session as it is. Bad
 * options throw `invalid_input`.
 *
 * @example
 * ```ts
 * const work = createWorkSessions({ store, events });
 * await work.open({ missionId: "m1", model: "opus" });
 * await work.recordTurn({ missionId: "m1", role: "engineer", startedAt, endedAt, toolCalls: 4, usage, model: "opus" });
 * await work.checkpoint({ missionId: "m1", role: "engineer", handoff: { done: ["parser"], inFlight: [], nextSteps: [], warnings: [] } });
 * ```
 */
export function createWorkSessions(options: WorkSessionsOptions): WorkSessions {
  const parsed = validateOrThrow(OptionsSchema, options, "work sessions options");
  const { store } = options;
  const clock = options.clock ?? systemClock;
  const events = options.events ?? createEventBus({ clock });
  const limits: WorkSessionLimits = { ...DEFAULT_WORK_SESSION_LIMITS, ...(definedOnly(parsed.limits ?? {}) as Partial<WorkSessionLimits>) };
  const idleMs = limits.idleMinutes * 60_000;

  const read = (missionId: string): ResultAsync<WorkSessionsDoc | undefined, KeelError> =>
    store.docs.get(workSessionKey(missionId)).andThen((doc) => {
      const value = parseWorkSessionsDoc(doc, missionId);
      return value.isOk() ? okAsync(value.value) : errAsync(value.error);
    });
  /** CAS read-modify-write; `change` returns the next document, `undefined` (nothing to write) or an error. */
  const mutate = (missionId: string, change: (current: WorkSessionsDoc, now: number) => WorkSessionsDoc | undefined | KeelError) =>
    updateDoc<JsonValue>(store.docs, workSessionKey(missionId), (doc) => {
      const current = parseWorkSessionsDoc(doc, missionId);
      if (current.isErr()) return errAsync(current.error);
      const next = change(current.value ?? emptyWorkSessionsDoc(missionId), clock.now());
      if (next instanceof KeelError) return errAsync(next);
      return okAsync(next as unknown as JsonValue | undefined);
    }).map((doc) => (doc ? parseWorkSessionsDoc(doc, missionId).unwrapOr(undefined) : undefined));

  const noSession = (missionId: string, scopeRole: string | null, what: string) =>
    new KeelError(
      "no_session",
      `${scopeRole === null ? `mission "${missionId}"` : `role "${scopeRole}" of mission "${missionId}"`} has no open work session: ` +
        `call keel.openWorkSession({ missionId: "${missionId}", model }) first, then ${what} again`,
      { details: { missionId, role: scopeRole, recovery: "openWorkSession" } },
    );
  const fail = (error: KeelError) => errAsync<never, KeelError>(error);
  const emitAuditDue = (doc: WorkSessionsDoc | undefined, missionId: string) => {
    const status = statusOf(doc, missionId, null, limits);
    if (status.audit.due) {
      events.emit({ type: "work.session.audit_due", missionId, closedSinceAudit: status.audit.closedSinceAudit, every: limits.auditEvery, lastAuditAt: status.audit.lastAuditAt });
    }
  };

  return {
    limits: Object.freeze({ ...limits }),
    open(input) {
      const checked = validate(OpenSchema, input, "openWorkSession input");
      if (checked.isErr()) return fail(checked.error);
      const { missionId, model: pinned } = checked.value;
      const scopeRole = checked.value.role ?? null;
      let continued = false;
      return mutate(missionId, (current, now) => {
        const open = openSessionOf(current, scopeRole);
        continued = open !== undefined;
        if (!open) return withOpenSession(current, newSessionRecord(newId(), scopeRole, pinned, now));
        if (open.model === pinned) return undefined;
        return new KeelError(
          "conflict",
          `a work session pinned to model ${JSON.stringify(open.model)} is already open for ${scopeRole ?? "the mission"}: close it (keel.closeWorkSession) before opening one on ${JSON.stringify(pinned)}`,
          { details: { missionId, role: scopeRole, sessionId: open.sessionId, model: open.model, requested: pinned } },
        );
      }).map((doc) => {
        const status = statusOf(doc, missionId, scopeRole, limits);
        const session = status.session!;
        events.emit({ type: "work.session.opened", missionId, role: scopeRole, sessionId: session.sessionId, model: session.model, continued });
        if (!continued) emitAuditDue(doc, missionId);
        return status;
      });
    },
    close(input) {
      const checked = validate(ScopeSchema, input, "closeWorkSession input");
      if (checked.isErr()) return fail(checked.error);
      const { missionId } = checked.value;
      const scopeRole = checked.value.role ?? null;
      let closed: WorkSessionView | undefined;
      return mutate(missionId, (current, now) => {
        const open = openSessionOf(current, scopeRole);
        if (!open) return noSession(missionId, scopeRole, "close it");
        const next = withClosedSession(current, open, now);
        closed = viewOf(next.closed.at(-1)!);
        return next;
      }).map((doc) => {
        const session = closed!;
        events.emit({
          type: "work.session.closed",
          missionId,
          role: scopeRole,
          sessionId: session.sessionId,
          model: session.model,
          turns: session.turns,
          tasks: session.tasks,
          tokens: session.tokens,
          toolCalls: session.toolCalls,
          activeMinutes: session.activeMinutes,
          openedAt: session.openedAt,
          closedAt: session.closedAt!,
        });
        emitAuditDue(doc, missionId);
        return { session, status: statusOf(doc, missionId, scopeRole, limits) };
      });
    },
    status(input) {
      const checked = validate(ScopeSchema, input, "workSession input");
      if (checked.isErr()) return fail(checked.error);
      const { missionId } = checked.value;
      return read(missionId).map((doc) => statusOf(doc, missionId, checked.value.role ?? null, limits));
    },
    recordTurn(input) {
      const checked = validate(TurnSchema, input, "work-session turn");
      if (checked.isErr()) return fail(checked.error);
      const turn = checked.value;
      let counted: { sessionId: string; pinned: string | null } | undefined;
      return mutate(turn.missionId, (current) => {
        const session = sessionForRole(current, turn.role);
        counted = session && { sessionId: session.sessionId, pinned: session.model };
        if (!session) return undefined; // nothing to count in: the event below still records the turn
        return withOpenSession(current, withTurn(session, { ...turn, taskId: turn.taskId ?? null }, idleMs));
      }).map((doc): RecordedTurn => {
        const sessionId = counted?.sessionId ?? null;
        const mismatch = counted !== undefined && counted.pinned !== turn.model;
        events.emit({
          type: "work.session.turn",
          missionId: turn.missionId,
          role: turn.role,
          sessionId,
          model: turn.model,
          usage: turn.usage,
          tokens: usageTokens(turn.usage),
          toolCalls: turn.toolCalls,
          wallMs: Math.max(0, turn.endedAt - turn.startedAt),
          taskId: turn.taskId ?? null,
        });
        if (mismatch) {
          events.emit({ type: "work.session.model_mismatch", missionId: turn.missionId, role: turn.role, sessionId: sessionId!, expected: counted!.pinned, actual: turn.model });
        }
        return { sessionId, modelMismatch: mismatch, status: statusOf(doc, turn.missionId, turn.role, limits) };
      });
    },
    checkpoint(input) {
      const checked = validate(RoleScopeSchema, input, "checkpoint input");
      if (checked.isErr()) return fail(checked.error);
      const { missionId, role: handoffRole } = checked.value;
      return read(missionId).andThen((doc) => {
        const session = sessionForRole(doc, handoffRole);
        if (!session) return fail(noSession(missionId, handoffRole, "checkpoint"));
        // First the handoff, then the counter: a failed handoff leaves the counter as it was.
        return writeHandoffRecord(store.docs, clock, missionId, handoffRole, checked.value.handoff).andThen((handoff) =>
          mutate(missionId, (current) => {
            const open = current.open.find((entry) => entry.sessionId === session.sessionId);
            if (!open) return noSession(missionId, handoffRole, "checkpoint");
            return withOpenSession(current, { ...open, checkpointCounter: 0, checkpoints: open.checkpoints + 1 });
          }).map((after) => {
            events.emit({ type: "work.session.checkpoint", missionId, role: handoffRole, sessionId: session.sessionId, handoffRevision: handoff.revision });
            return { handoff, status: statusOf(after, missionId, handoffRole, limits) };
          }),
        );
      });
    },
    writeHandoff(input) {
      const checked = validate(RoleScopeSchema, input, "writeHandoff input");
      if (checked.isErr()) return fail(checked.error);
      return writeHandoffRecord(store.docs, clock, checked.value.missionId, checked.value.role, checked.value.handoff);
    },
    recordAudit(input) {
      const checked = validate(AuditSchema, input, "recordAudit input");
      if (checked.isErr()) return fail(checked.error);
      const { missionId } = checked.value;
      let before = 0;
      return mutate(missionId, (current, now) => {
        before = current.closedSinceAudit;
        return { ...current, closedSinceAudit: 0, lastAudit: { at: now, note: checked.value.note ?? null } };
      }).map((doc) => {
        events.emit({ type: "work.session.audited", missionId, closedSinceAudit: before, note: checked.value.note ?? null });
        return statusOf(doc, missionId, null, limits);
      });
    },
    metrics(input) {
      const checked = validate(MetricsSchema, input, "work-session metrics input");
      if (checked.isErr()) return fail(checked.error);
      const { missionId, slice } = checked.value;
      return read(missionId).andThen((doc) => {
        const result = workSessionMetrics(doc, missionId, checked.value.role ?? null, slice, clock.now());
        return result.isOk() ? okAsync(result.value) : fail(result.error);
      });
    },
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
