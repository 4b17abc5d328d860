import { SafeNameSchema, systemClock, validate, validateOrThrow, type Clock, type KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { keelStoreSchema } from "@keel/store/kit";
import { errAsync, type ResultAsync } from "neverthrow";
import { z } from "zod";
import type { Handoff, HandoffRecord } from "./handoff.js";
import { noWorkSession, workSessionsDocs } from "./internal/work-session-doc.js";
import { openSessionOf, sessionForRole, withActivity, withOpenSession, type WorkSessionRecord } from "./work-session-record.js";
import { DEFAULT_WORK_SESSION_LIMITS, type WorkSessionStatus } from "./work-session-status.js";
import { createWorkSessions } from "./work-session.js";

/**
 * Work-session limits under the names of {@link createHygiene}.
 *
 * @deprecated use `WorkSessionLimits` (`maxActiveMinutes`, `maxToolCalls`, `idleMinutes`).
 */
export interface HygieneLimits {
  /** Active minutes a work session may run (default 180): `maxActiveMinutes`. */
  activeMinutes: number;
  /** Tool calls a work session may make (default 200): `maxToolCalls`. */
  toolCalls: number;
  /** A gap between two activities longer than this many minutes is idle and does not count (default 15). */
  idleMinutes: number;
}

/**
 * The status of a role's work session as {@link createHygiene} shows it. With no open session,
 * `state` is `no_session` and the counters are 0: check `state` first.
 *
 * @deprecated use `WorkSessionStatus` (`createWorkSessions(...).status(...)`), whose counters are `null` without a session.
 */
export interface HygieneStatus {
  /** `open` while a work session covers the role, else `no_session`. */
  state: "open" | "no_session";
  /** Tool calls recorded in the open session. */
  toolCalls: number;
  /** Active minutes of the open session (idle gaps excluded), fractional. */
  activeMinutes: number;
  /** Tool calls since the last checkpoint. */
  checkpointCounter: number;
  /** The open session's id, or `null`. */
  sessionId: string | null;
  /** When the open session was opened, epoch ms, or `null`. */
  openedAt: number | null;
  /** The last recorded activity, epoch ms, or `null`. */
  lastActivityAt: number | null;
  /** The limits in force. */
  limits: HygieneLimits;
  /** The limits reached (empty when none, or with no session). */
  exceeded: ("toolCalls" | "activeMinutes")[];
}

/**
 * Options of {@link createHygiene}.
 *
 * @deprecated use `WorkSessionsOptions` of `createWorkSessions`.
 */
export interface HygieneOptions {
  /** Where the work sessions and handoffs live. */
  store: KeelStore;
  /** The mission (a safe name). */
  missionId: string;
  /** The role (a safe name). */
  role: string;
  /** Default the system clock. */
  clock?: Clock;
  /** Overrides of the default limits (180 active minutes, 200 tool calls, idle after 15 minutes). */
  limits?: Partial<HygieneLimits>;
}

/**
 * One role's work session through {@link createHygiene}.
 *
 * @deprecated use `WorkSessions` (`createWorkSessions`).
 */
export interface Hygiene {
  /** The status from this instance's last read or write (synchronous). */
  status(): HygieneStatus;
  /** Opens the role's work session, or continues the one left open (also by an earlier process). */
  open(): ResultAsync<HygieneStatus, KeelError>;
  /** Closes the role's open session; `no_session` when none is open. */
  close(): ResultAsync<{ sessionId: string; toolCalls: number; activeMinutes: number; checkpointCounter: number; openedAt: number; closedAt: number }, KeelError>;
  /** Records activity now with `toolCalls` tool calls (default 0); `no_session` when no session covers the role. */
  recordActivity(options?: { toolCalls?: number }): ResultAsync<HygieneStatus, KeelError>;
  /** Shorthand for `recordActivity({ toolCalls: count })` (default 1). */
  recordToolCalls(count?: number): ResultAsync<HygieneStatus, KeelError>;
  /** Sets the checkpoint counter to 0, and nothing else (`WorkSessions.resetCheckpointCounter`). `no_session` when no session covers the role. */
  resetCheckpointCounter(): ResultAsync<HygieneStatus, KeelError>;
  /** Writes the handoff, then resets the checkpoint counter (`WorkSessions.checkpoint`). */
  checkpoint(handoff: Handoff): ResultAsync<{ handoff: HandoffRecord; status: HygieneStatus }, KeelError>;
  /** Re-reads the status from the store. */
  refresh(): ResultAsync<HygieneStatus, KeelError>;
}

const OptionsSchema = z.strictObject({
  store: keelStoreSchema(["docs"]),
  missionId: SafeNameSchema,
  role: SafeNameSchema,
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
  limits: z
    .strictObject({
      activeMinutes: z.number().positive().optional(),
      toolCalls: z.number().int().positive().optional(),
      idleMinutes: z.number().positive().optional(),
    })
    .optional(),
});

const ActivitySchema = z.strictObject({ toolCalls: z.number().int().nonnegative().optional() });

/**
 * One role's work session under the old names: a thin view of {@link createWorkSessions} (the same
 * document, `["missions", missionId, "work-sessions"]`, and the same session a runtime counts
 * turns in). Bad options throw `invalid_input`.
 *
 * @deprecated use `createWorkSessions`: `open({ missionId, role, model })`, `recordTurn`,
 * `status`, `checkpoint`, `close`. Work sessions kept by an earlier version of `createHygiene`
 * at `["missions", missionId, "hygiene", role]` are not read.
 *
 * @example
 * ```ts
 * const hygiene = createHygiene({ store, missionId: "m1", role: "engineer" });
 * await hygiene.open();
 * await hygiene.recordToolCalls(3);
 * hygiene.status(); // { state: "open", toolCalls: 3, checkpointCounter: 3, ... }
 * ```
 */
export function createHygiene(options: HygieneOptions): Hygiene {
  const parsed = validateOrThrow(OptionsSchema, options, "hygiene options");
  const { store } = options;
  const missionId = String(parsed.missionId);
  const role = String(parsed.role);
  const clock = options.clock ?? systemClock;
  const given = parsed.limits ?? {};
  const limits: HygieneLimits = {
    activeMinutes: given.activeMinutes ?? DEFAULT_WORK_SESSION_LIMITS.maxActiveMinutes,
    toolCalls: given.toolCalls ?? DEFAULT_WORK_SESSION_LIMITS.maxToolCalls,
    idleMinutes: given.idleMinutes ?? DEFAULT_WORK_SESSION_LIMITS.idleMinutes,
  };
  const work = createWorkSessions({
    store,
    clock,
    limits: { maxActiveMinutes: limits.activeMinutes, maxToolCalls: limits.toolCalls, idleMinutes: limits.idleMinutes },
  });
  const docs = workSessionsDocs(store, clock);
  const scope = { missionId, role };
  let cached = hygieneStatusOf(undefined, limits);
  const remember = (status: WorkSessionStatus) => (cached = hygieneStatusOf(status, limits));
  /** Changes the session covering the role: `no_session` without one. */
  const change = (update: (session: WorkSessionRecord, now: number) => WorkSessionRecord) =>
    docs
      .mutate(missionId, (current, now) => {
        const session = sessionForRole(current, role);
        return session ? withOpenSession(current, update(session, now)) : noWorkSession(missionId, role, "record it");
      })
      .andThen(() => work.status(scope))
      .map(remember);
  const recordActivity = (activity: { toolCalls?: number } = {}) => {
    const checked = validate(ActivitySchema, activity, "activity");
    if (checked.isErr()) return errAsync(checked.error);
    const calls = checked.value.toolCalls ?? 0;
    return change((session, now) => withActivity(session, now, calls, limits.idleMinutes * 60_000));
  };

  return {
    status: () => cached,
    open: () =>
      // The role's own session is continued whatever its model; otherwise one is opened on the backend's default.
      docs
        .read(missionId)
        .andThen((doc) => (openSessionOf(doc, role) ? work.status(scope) : work.open({ ...scope, model: null })))
        .map(remember),
    close: () =>
      work.close(scope).map(({ session, status }) => {
        remember(status);
        const { sessionId, toolCalls, activeMinutes, checkpointCounter, openedAt } = session;
        return { sessionId, toolCalls, activeMinutes, checkpointCounter, openedAt, closedAt: session.closedAt ?? openedAt };
      }),
    recordActivity,
    recordToolCalls: (calls = 1) => recordActivity({ toolCalls: calls }),
    // The same reset as `WorkSessions.resetCheckpointCounter`, over the same session the runtime's gate reads.
    resetCheckpointCounter: () => work.resetCheckpointCounter(scope).map(remember),
    checkpoint: (handoff) => work.checkpoint({ ...scope, handoff }).map(({ handoff: written, status }) => ({ handoff: written, status: remember(status) })),
    refresh: () => work.status(scope).map(remember),
  };
}

/** A work-session status under the old names (zeros without a session, as before). */
function hygieneStatusOf(status: WorkSessionStatus | undefined, limits: HygieneLimits): HygieneStatus {
  const session = status?.session;
  if (!session) {
    return { state: "no_session", toolCalls: 0, activeMinutes: 0, checkpointCounter: 0, sessionId: null, openedAt: null, lastActivityAt: null, limits, exceeded: [] };
  }
  const exceeded = status.exceeded.map((limit) => (limit === "maxToolCalls" ? ("toolCalls" as const) : ("activeMinutes" as const)));
  const { toolCalls, activeMinutes, checkpointCounter, sessionId, openedAt, lastActivityAt } = session;
  return { state: "open", toolCalls, activeMinutes, checkpointCounter, sessionId, openedAt, lastActivityAt, limits, exceeded };
}
