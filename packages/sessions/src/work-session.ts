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
  type Usage,
} from "@keel/core";
import type { KeelStore } from "@keel/store";
import { keelStoreSchema } from "@keel/store/kit";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { z } from "zod";
import { writeHandoffRecord, type Handoff, type HandoffRecord } from "./handoff.js";
import { decideModelPin, type ModelPinCheck } from "./work-session-model.js";
import { workSessionMetrics, type WorkSessionMetrics, type WorkSessionSlice, type WorkSessionWindow } from "./work-session-metrics.js";
import { noWorkSession, workSessionsDocs } from "./internal/work-session-doc.js";
import {
  newSessionRecord,
  openSessionOf,
  sessionForRole,
  usageTokens,
  withClosedSession,
  withOpenSession,
  withTurn,
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
  /**
   * The model the session is pinned to (`null`: the backend's default). A turn that names another
   * model is a mismatch; one that names none is "model unknown", never a mismatch (`decideModelPin`).
   */
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
  /** The model the turn named, or `null` when it named none (the backend's default ran: unknown to Keel). */
  model: string | null;
  /** The declared task, if any. */
  taskId?: string | null;
}

/** What {@link WorkSessions.recordTurn} did. */
export interface RecordedTurn {
  /** The session it was counted in, or `null` when none was open (the turn's usage is still in `work.session.turn`). */
  sessionId: string | null;
  /** True when the turn named a model other than the session's pinned one (`modelPin === "mismatch"`). */
  modelMismatch: boolean;
  /**
   * The turn's model against the session's pin (`decideModelPin`): `match`, `mismatch`, or
   * `unknown` when the turn named no model in a session pinned to one; `null` without a session.
   */
  modelPin: ModelPinCheck | null;
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
  /**
   * Sets the checkpoint counter of the session covering the role (its own, else the mission-wide
   * one) to 0, and does nothing else: no handoff is written and `checkpoints` does not move.
   * Emits `work.session.checkpoint_counter_reset`. `no_session` (nothing written) when none is open;
   * `invalid_input` for a bad scope.
   */
  resetCheckpointCounter(input: { missionId: string; role: string }): ResultAsync<WorkSessionStatus, KeelError>;
  /** Writes a handoff whatever the hygiene state (above all past a limit); resets nothing. */
  writeHandoff(input: { missionId: string; role: string; handoff: Handoff }): ResultAsync<HandoffRecord, KeelError>;
  /** Records an audit of the mission: the audit cadence starts again. */
  recordAudit(input: { missionId: string; note?: string | null }): ResultAsync<WorkSessionStatus, KeelError>;
  /**
   * "This session" (`{ session: "current" }`) or the last N sessions (`{ lastSessions: N }`), each
   * over its own window. "This session" with none open is `no_session`, never an all-time figure;
   * a window over a mission that never had a session is `no_session` too.
   */
  metrics(input: WorkSessionScope & { slice: WorkSessionSlice }): ResultAsync<WorkSessionMetrics | WorkSessionWindow, KeelError>;
}

const LimitsSchema = z.strictObject({
  maxToolCalls: z.number().int().positive().optional(),
  maxActiveMinutes: z.number().positive().optional(),
  idleMinutes: z.number().positive().optional(),
  auditEvery: z.number().int().positive().optional(),
});

const OptionsSchema = z.strictObject({
  store: keelStoreSchema(["docs"]),
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
const CounterScopeSchema = z.strictObject({ missionId: SafeNameSchema.transform(String), role: SafeNameSchema.transform(String) });
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

  const { read, mutate } = workSessionsDocs(store, clock);
  const fail = (error: KeelError) => errAsync<never, KeelError>(error);
  const emitAuditDue = (doc: WorkSessionsDoc | undefined, missionId: string) => {
    const status = statusOf(doc, missionId, null, limits);
    if (status.audit.due) {
      events.emit({ type: "work.session.audit_due", missionId, closedSinceAudit: status.audit.closedSinceAudit, every: limits.auditEvery, lastAuditAt: status.audit.lastAuditAt });
    }
  };

  /**
   * The one reset of the checkpoint counter, shared by `checkpoint` (after its handoff, counting
   * a checkpoint) and `resetCheckpointCounter`: the session covering `role` (or exactly
   * `sessionId` when given: the one a checkpoint wrote its handoff for) gets its counter set to 0.
   */
  const resetCounter = (missionId: string, counterRole: string, sessionId: string | null, what: string, countCheckpoint: boolean) => {
    let reset: { sessionId: string; previous: number } | undefined;
    return mutate(missionId, (current) => {
      const open = sessionId === null ? sessionForRole(current, counterRole) : current.open.find((entry) => entry.sessionId === sessionId);
      if (!open) return noWorkSession(missionId, counterRole, what);
      reset = { sessionId: open.sessionId, previous: open.checkpointCounter };
      return withOpenSession(current, { ...open, checkpointCounter: 0, checkpoints: open.checkpoints + (countCheckpoint ? 1 : 0) });
    }).map((doc) => ({ doc, sessionId: reset!.sessionId, previous: reset!.previous }));
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
        if (!open) return noWorkSession(missionId, scopeRole, "close it");
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
          // Every turn's count unknown: unknown, not 0.
          toolCalls: session.turns > 0 && session.turnsWithoutToolCalls === session.turns ? null : session.toolCalls,
          turnsWithoutToolCalls: session.turnsWithoutToolCalls,
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
        const modelPin = counted === undefined ? null : decideModelPin(counted.pinned, turn.model);
        const mismatch = modelPin === "mismatch";
        events.emit({
          type: "work.session.turn",
          missionId: turn.missionId,
          role: turn.role,
          sessionId,
          model: turn.model,
          usage: turn.usage,
          tokens: usageTokens(turn.usage),
          toolCalls: turn.toolCalls,
          modelPin,
          wallMs: Math.max(0, turn.endedAt - turn.startedAt),
          taskId: turn.taskId ?? null,
        });
        if (mismatch) {
          events.emit({ type: "work.session.model_mismatch", missionId: turn.missionId, role: turn.role, sessionId: sessionId!, expected: counted!.pinned, actual: turn.model });
        }
        return { sessionId, modelMismatch: mismatch, modelPin, status: statusOf(doc, turn.missionId, turn.role, limits) };
      });
    },
    checkpoint(input) {
      const checked = validate(RoleScopeSchema, input, "checkpoint input");
      if (checked.isErr()) return fail(checked.error);
      const { missionId, role: handoffRole } = checked.value;
      return read(missionId).andThen((doc) => {
        const session = sessionForRole(doc, handoffRole);
        if (!session) return fail(noWorkSession(missionId, handoffRole, "checkpoint"));
        // First the handoff, then the counter: a failed handoff leaves the counter as it was.
        return writeHandoffRecord(store.docs, clock, missionId, handoffRole, checked.value.handoff).andThen((handoff) =>
          resetCounter(missionId, handoffRole, session.sessionId, "checkpoint", true).map(({ doc: after }) => {
            events.emit({ type: "work.session.checkpoint", missionId, role: handoffRole, sessionId: session.sessionId, handoffRevision: handoff.revision });
            return { handoff, status: statusOf(after, missionId, handoffRole, limits) };
          }),
        );
      });
    },
    resetCheckpointCounter(input) {
      const checked = validate(CounterScopeSchema, input, "resetCheckpointCounter input");
      if (checked.isErr()) return fail(checked.error);
      const { missionId, role: counterRole } = checked.value;
      return resetCounter(missionId, counterRole, null, "reset the checkpoint counter", false).map(({ doc, sessionId, previous }) => {
        events.emit({ type: "work.session.checkpoint_counter_reset", missionId, role: counterRole, sessionId, previous });
        return statusOf(doc, missionId, counterRole, limits);
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
