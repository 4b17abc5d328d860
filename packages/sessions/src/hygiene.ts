import { KeelError, SafeNameSchema, newId, systemClock, validate, validateOrThrow, type Clock, type JsonValue } from "@keel/core";
import { type Doc, type KeelStore } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { z } from "zod";
import { writeHandoffRecord, type Handoff, type HandoffRecord } from "./handoff.js";
import { closedSummary, openedRecord, parseHygieneRecord, statusOf, withActivity, type HygieneRecord } from "./internal/hygiene-record.js";
import { hygieneKey } from "./session-keys.js";

/** Work-session hygiene limits. */
export interface HygieneLimits {
  /** Active minutes a work session may run (default 180). */
  activeMinutes: number;
  /** Tool calls a work session may make (default 200). */
  toolCalls: number;
  /** A gap between two activities longer than this many minutes is idle and does not count (default 15). */
  idleMinutes: number;
}

/** The default hygiene limits: 180 active minutes, 200 tool calls, idle after 15 minutes. */
export const DEFAULT_HYGIENE_LIMITS: Readonly<HygieneLimits> = Object.freeze({ activeMinutes: 180, toolCalls: 200, idleMinutes: 15 });

/** Whether a work session is open. */
export type HygieneState = "open" | "no_session";

/** A limit that a work session has reached. */
export type HygieneLimitName = "toolCalls" | "activeMinutes";

/**
 * The state of a role's work session, as capacity gates read it. With no open session, `state`
 * is `no_session` and the counters are 0 because there is nothing to count, not because
 * nothing was done: gates must check `state` first.
 */
export interface HygieneStatus {
  /** `open` while a work session is open, else `no_session`. */
  state: HygieneState;
  /** Tool calls recorded in the open session. */
  toolCalls: number;
  /** Active minutes of the open session (idle gaps excluded), fractional. */
  activeMinutes: number;
  /** Tool calls since the last checkpoint (reset only by `resetCheckpointCounter`/`checkpoint`). */
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
  exceeded: HygieneLimitName[];
}

/** A closed work session's totals. */
export interface ClosedWorkSession {
  /** The session's id. */
  sessionId: string;
  /** Tool calls it made. */
  toolCalls: number;
  /** Its active minutes. */
  activeMinutes: number;
  /** The checkpoint counter when it closed. */
  checkpointCounter: number;
  /** When it was opened, epoch ms. */
  openedAt: number;
  /** When it was closed, epoch ms. */
  closedAt: number;
}

/** What {@link Hygiene.checkpoint} returns. */
export interface CheckpointResult {
  /** The handoff as written. */
  handoff: HandoffRecord;
  /** The status after the counter was reset. */
  status: HygieneStatus;
}

/** Options of {@link createHygiene}. */
export interface HygieneOptions {
  /** Where the work-session state and handoffs live. */
  store: KeelStore;
  /** The mission (a safe name). */
  missionId: string;
  /** The role (a safe name). */
  role: string;
  /** Default the system clock. */
  clock?: Clock;
  /** Overrides of {@link DEFAULT_HYGIENE_LIMITS}. */
  limits?: Partial<HygieneLimits>;
}

/** A role's work-session hygiene: active time, tool-call capacity and a checkpoint counter. */
export interface Hygiene {
  /** The current status, from this instance's last read or write (synchronous, for gates). */
  status(): HygieneStatus;
  /** Opens a work session, or continues the one left open (also by an earlier process). */
  open(): ResultAsync<HygieneStatus, KeelError>;
  /** Closes the open session; `no_session` when none is open. */
  close(): ResultAsync<ClosedWorkSession, KeelError>;
  /**
   * Records activity now, with `toolCalls` tool calls (default 0), which also count towards the
   * checkpoint counter. The gap since the last activity counts as active unless it is longer
   * than `idleMinutes`. `no_session` when none is open. Counting goes on past the limits.
   */
  recordActivity(options?: { toolCalls?: number }): ResultAsync<HygieneStatus, KeelError>;
  /** Shorthand for `recordActivity({ toolCalls: count })` (default 1). */
  recordToolCalls(count?: number): ResultAsync<HygieneStatus, KeelError>;
  /** Sets the checkpoint counter to 0, and nothing else. `no_session` when none is open. */
  resetCheckpointCounter(): ResultAsync<HygieneStatus, KeelError>;
  /**
   * Writes the handoff, then resets the checkpoint counter, in that order. When the handoff
   * cannot be written the counter is left alone and the error returned. `no_session` (nothing
   * written) when no session is open: use `writeHandoff` to hand off without one.
   */
  checkpoint(handoff: Handoff): ResultAsync<CheckpointResult, KeelError>;
  /** Re-reads the persisted state (another process may have changed it). */
  refresh(): ResultAsync<HygieneStatus, KeelError>;
}

const LimitsSchema = z.strictObject({
  activeMinutes: z.number().positive().optional(),
  toolCalls: z.number().int().positive().optional(),
  idleMinutes: z.number().positive().optional(),
});

const OptionsSchema = z.strictObject({
  store: z.custom<KeelStore>((value) => typeof (value as KeelStore | undefined)?.docs?.get === "function", "store must be a KeelStore"),
  missionId: SafeNameSchema,
  role: SafeNameSchema,
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
  limits: LimitsSchema.optional(),
});



/**
 * Creates a role's work-session hygiene, persisted at `["missions", missionId, "hygiene", role]`
 * so that a restarted process continues the open session. Continuity (handoffs) is separate:
 * writing a handoff is always allowed and resets nothing. Bad options throw `invalid_input`.
 *
 * @example
 * ```ts
 * const hygiene = createHygiene({ store, missionId: "m1", role: "engineer" });
 * await hygiene.open();
 * await hygiene.recordToolCalls(3);
 * hygiene.status(); // { state: "open", toolCalls: 3, checkpointCounter: 3, ... }
 * await hygiene.checkpoint({ done: ["parser"], inFlight: [], nextSteps: ["tests"], warnings: [] });
 * ```
 */
export function createHygiene(options: HygieneOptions): Hygiene {
  validateOrThrow(OptionsSchema, options, "hygiene options");
  const { store, missionId, role } = options;
  const clock = options.clock ?? systemClock;
  const limits: HygieneLimits = { ...DEFAULT_HYGIENE_LIMITS, ...stripUndefined(options.limits ?? {}) };
  const key = hygieneKey(missionId, role);
  let cached: HygieneRecord | undefined;

  const toStatus = (record: HygieneRecord | undefined) => statusOf(record, limits);
  const parse = (doc: Doc | undefined): ResultAsync<HygieneRecord | undefined, KeelError> => {
    const parsed = parseHygieneRecord(doc, missionId, role);
    return parsed.isOk() ? okAsync(parsed.value) : errAsync(parsed.error);
  };
  const noSession = () =>
    new KeelError("no_session", `role "${role}" of mission "${missionId}" has no open work session: call open() first`, {
      details: { missionId, role },
    });
  /** Read-modify-write of the persisted record; `change` sees the current record (or undefined). */
  const mutate = (change: (current: HygieneRecord | undefined, now: number) => HygieneRecord | KeelError): ResultAsync<HygieneRecord, KeelError> =>
    updateDoc<JsonValue>(store.docs, key, (doc) =>
      parse(doc).andThen((current) => {
        const next = change(current, clock.now());
        if (next instanceof KeelError) return errAsync(next);
        // Unchanged: nothing to write.
        return okAsync(next === current ? undefined : (next as unknown as JsonValue));
      }),
    ).map((doc) => {
      cached = doc!.value as unknown as HygieneRecord;
      return cached;
    });
  const requireOpen = (current: HygieneRecord | undefined): current is HygieneRecord => current?.state === "open";
  const recordActivity = (activityOptions: { toolCalls?: number } = {}) => {
    const parsed = validate(z.strictObject({ toolCalls: z.number().int().nonnegative().optional() }), activityOptions, "activity");
    if (parsed.isErr()) return errAsync(parsed.error);
    const calls = parsed.value.toolCalls ?? 0;
    return mutate((current, now) => (requireOpen(current) ? withActivity(current, now, calls, limits.idleMinutes * 60_000) : noSession())).map(toStatus);
  };
  const resetCheckpointCounter = () =>
    mutate((current) => (requireOpen(current) ? { ...current, checkpointCounter: 0 } : noSession())).map(toStatus);

  return {
    status: () => toStatus(cached),
    open: () =>
      mutate((current, now) => (requireOpen(current) ? current : openedRecord(missionId, role, newId(), now))).map(toStatus),
    close: () =>
      mutate((current, now) => (requireOpen(current) ? { ...current, state: "closed", closedAt: now } : noSession())).map(closedSummary),
    recordActivity,
    recordToolCalls: (calls = 1) => recordActivity({ toolCalls: calls }),
    resetCheckpointCounter,
    checkpoint: (handoff) =>
      store.docs
        .get(key)
        .andThen(parse)
        .andThen((current) => {
          if (!requireOpen(current)) return errAsync(noSession());
          return writeHandoffRecord(store.docs, clock, missionId, role, handoff).andThen((written) =>
            resetCheckpointCounter().map((status) => ({ handoff: written, status })),
          );
        }),
    refresh: () =>
      store.docs
        .get(key)
        .andThen(parse)
        .map((record) => {
          cached = record;
          return toStatus(record);
        }),
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
