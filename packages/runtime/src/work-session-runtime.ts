import { validateOrThrow, type KeelError, type Clock, type EventBus, type Usage } from "@keel/core";
import { createCapacityGate, type Limits } from "@keel/budget";
import {
  createWorkSessions,
  type ClosedWorkSessionResult,
  type Handoff,
  type HandoffRecord,
  type OpenWorkSessionInput,
  type RoleSessions,
  type WorkSessionCheckpoint,
  type WorkSessionLimits,
  type WorkSessionMetrics,
  type WorkSessionScope,
  type WorkSessionSlice,
  type WorkSessionStatus,
  type WorkSessionWindow,
  type WorkSessions,
} from "@keel/sessions";
import type { KeelStore } from "@keel/store";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { z } from "zod";
import type { RuntimeWarning } from "./role-turn.js";
import { warnOnError, type Warned } from "./internal/turn-warnings.js";

/** Work-session settings of {@link createKeel}: the capacity gate's limits and the audit cadence. */
export interface RuntimeWorkSessionOptions {
  /** Tool calls a work session may make before budgeted turns are refused (default 200). */
  maxToolCalls?: number;
  /** Active minutes a work session may last before budgeted turns are refused (default 180). */
  maxActiveMinutes?: number;
  /** A gap between two turns longer than this many minutes is idle and not counted (default 15). */
  idleMinutes?: number;
  /** Closed sessions after which an audit is due (default 3). */
  auditEvery?: number;
}

/** zod schema of {@link RuntimeWorkSessionOptions}. */
export const RuntimeWorkSessionOptionsSchema = z.strictObject({
  maxToolCalls: z.number().int().positive().optional(),
  maxActiveMinutes: z.number().positive().optional(),
  idleMinutes: z.number().positive().optional(),
  auditEvery: z.number().int().positive().optional(),
});

/** The work-session methods a {@link Keel} instance has. */
export interface KeelWorkSessions {
  /**
   * Opens a work session for a mission (every role) or one role, pinned to `model`; continues
   * the one open for that scope with the same model. Budgeted turns need one.
   */
  openWorkSession(input: OpenWorkSessionInput): ResultAsync<WorkSessionStatus, KeelError>;
  /** Closes a scope's open session (`no_session` when none is open); the status says whether an audit is due. */
  closeWorkSession(scope: WorkSessionScope): ResultAsync<ClosedWorkSessionResult, KeelError>;
  /** The work-session status of a mission or role, read from the store every time (any process, after any restart). */
  workSession(scope: WorkSessionScope): ResultAsync<WorkSessionStatus, KeelError>;
  /**
   * Writes the role's handoff, then resets the checkpoint counter, in that order (`no_session`,
   * nothing written, without a session): `writeHandoff` followed by `resetCheckpointCounter`.
   */
  checkpoint(input: { missionId: string; role: string; handoff: Handoff }): ResultAsync<WorkSessionCheckpoint, KeelError>;
  /**
   * Sets the checkpoint counter of the work session covering the role (its own, else the
   * mission-wide one: the session the capacity gate reads) to 0, and nothing else: no handoff is
   * written. Emits `work.session.checkpoint_counter_reset`. Errors: `invalid_input` (a bad
   * scope), `no_session` (none open: nothing written).
   */
  resetCheckpointCounter(input: { missionId: string; role: string }): ResultAsync<WorkSessionStatus, KeelError>;
  /** Writes the role's handoff whatever the hygiene state, above all past a limit; resets nothing. */
  writeHandoff(input: { missionId: string; role: string; handoff: Handoff }): ResultAsync<HandoffRecord, KeelError>;
  /** Records an audit of the mission: the audit cadence starts again. */
  recordAudit(input: { missionId: string; note?: string | null }): ResultAsync<WorkSessionStatus, KeelError>;
  /** "This session" (`slice: { session: "current" }`, `no_session` without one) or the last N sessions, each over its own window. */
  workSessionMetrics(input: WorkSessionScope & { slice: WorkSessionSlice }): ResultAsync<WorkSessionMetrics | WorkSessionWindow, KeelError>;
}

/** What a turn tells the work-session part of the runtime. */
export interface FinishedTurn {
  missionId: string;
  role: string;
  startedAt: number;
  endedAt: number;
  /** The backend's turn result (its tool calls are counted from it), or `undefined`. */
  backendResult: unknown;
  usage: Usage | null;
  model: string | null;
  taskId: string | null;
}

/** The work-session part of the runtime: the Keel methods and the hooks `runRoleTurn` calls. */
export interface WorkSessionRuntime extends KeelWorkSessions {
  /** The work sessions underneath. */
  readonly work: WorkSessions;
  /** The capacity gate: a turn with a declared budget needs an open session with capacity left; one without is admitted. */
  admit(turn: { missionId: string; role: string; taskId: string | null; budget: Limits | null | undefined }): ResultAsync<void, KeelError>;
  /**
   * Creates the mission checkpoint placeholder on the mission's first turn in this process
   * (create-only: never over a later one); a failure is returned as a `checkpoint`/`init` warning.
   */
  ensureMissionCheckpoint(missionId: string): ResultAsync<RuntimeWarning[], never>;
  /**
   * Counts a finished turn in its work session (or records it as in none): the session's id, or
   * `null` with a `work_session`/`record` warning when it could not be counted.
   */
  recordTurn(turn: FinishedTurn): ResultAsync<Warned<string | null>, never>;
}

/**
 * The tool calls of a backend turn result: the length of its `toolCalls` list, or a count the
 * adapter gave as a number; `null` when the backend gave `null` or nothing (unknown, never 0).
 * The one place that reads the backend's field.
 */
export function countToolCalls(result: unknown): number | null {
  const calls = (result as { toolCalls?: unknown } | null | undefined)?.toolCalls;
  if (Array.isArray(calls)) return calls.length;
  if (typeof calls === "number" && Number.isInteger(calls) && calls >= 0) return calls;
  return null;
}

/** Creates the work-session part of a runtime. Bad options throw `invalid_input`. */
export function createWorkSessionRuntime(options: {
  store: KeelStore;
  events: EventBus;
  clock: Clock;
  sessions: RoleSessions;
  settings?: RuntimeWorkSessionOptions;
}): WorkSessionRuntime {
  const settings = validateOrThrow(RuntimeWorkSessionOptionsSchema, options.settings ?? {}, "work session options");
  const limits: Partial<WorkSessionLimits> = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
  const work = createWorkSessions({ store: options.store, events: options.events, clock: options.clock, limits });
  const { events, sessions } = options;
  const checkpointed = new Set<string>();
  const recovery = (missionId: string) => ({
    noSession: `call keel.openWorkSession({ missionId: "${missionId}", model }) and run the turn again`,
    capacityRefused: `write a handoff (keel.writeHandoff), then keel.closeWorkSession and keel.openWorkSession for a fresh session, and run the turn again`,
  });

  return {
    work,
    openWorkSession: (input) => work.open(input),
    closeWorkSession: (scope) => work.close(scope),
    workSession: (scope) => work.status(scope),
    checkpoint: (input) => work.checkpoint(input),
    resetCheckpointCounter: (input) => work.resetCheckpointCounter(input),
    writeHandoff: (input) => work.writeHandoff(input),
    recordAudit: (input) => work.recordAudit(input),
    workSessionMetrics: (input) => work.metrics(input),
    admit(turn) {
      if (turn.budget == null) return okAsync(undefined);
      const gate = createCapacityGate({
        // A work-session status is the gate's `CapacityStatus` as it is: no shape to translate.
        sessions: { status: () => work.status({ missionId: turn.missionId, role: turn.role }) },
        maxToolCalls: work.limits.maxToolCalls,
        maxActiveMinutes: work.limits.maxActiveMinutes,
        recovery: recovery(turn.missionId),
      });
      const taskId = turn.taskId ?? `${turn.missionId}/${turn.role}`;
      return gate
        .admit({ taskId, budget: turn.budget })
        .map(() => undefined)
        .orElse((error) => {
          if (error.code === "no_session" || error.code === "capacity_refused") {
            const limit = typeof error.details["limit"] === "string" ? error.details["limit"] : null;
            const value = typeof error.details["value"] === "number" ? error.details["value"] : null;
            events.emit({ type: "work.session.refused", missionId: turn.missionId, role: turn.role, code: error.code, limit, value, taskId: turn.taskId });
          }
          return errAsync(error);
        });
    },
    ensureMissionCheckpoint(missionId) {
      if (checkpointed.has(missionId)) return okAsync([]);
      const created = sessions.initMissionCheckpoint(missionId).map(() => {
        checkpointed.add(missionId);
      });
      return warnOnError(created, undefined, "checkpoint", "init").map(({ warnings }) => warnings);
    },
    recordTurn(turn) {
      const recorded = work
        .recordTurn({
          missionId: turn.missionId,
          role: turn.role,
          startedAt: turn.startedAt,
          endedAt: Math.max(turn.endedAt, turn.startedAt),
          toolCalls: countToolCalls(turn.backendResult),
          usage: turn.usage,
          model: turn.model,
          taskId: turn.taskId,
        })
        .map((record): string | null => record.sessionId);
      return warnOnError(recorded, null, "work_session", "record");
    },
  };
}
