import { KeelError, toKeelError, validate, validateOrThrow, type JsonValue } from "@keel/core";
import { errAsync, okAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { LimitsSchema, type Limits } from "./budget-dimensions.js";

/**
 * The hygiene counters of the current work session, as a {@link CapacitySource} reports them.
 * A work session's status (`createWorkSessions(...).status(scope)` of `@keel/sessions`) has this
 * shape (and more fields, which are ignored).
 */
export type CapacityStatus =
  | {
      /** A work session is open. */
      state: "open";
      /**
       * Tool calls reported in the session so far, or `null` when none of its turns' backends
       * reported any (unknown, never read as 0).
       */
      toolCalls: number | null;
      /**
       * Turns whose backend did not report tool calls (default 0). Above 0, `toolCalls` is a
       * lower bound: the count is unknown.
       */
      turnsWithoutToolCalls?: number | null;
      /** Active minutes of the session so far (waiting on a checkpoint does not count). */
      activeMinutes: number;
    }
  | {
      /** No work session is open: there are no counters (any given are ignored, never read as 0). */
      state: "no_session";
      /** Ignored. */
      toolCalls?: number;
      /** Ignored. */
      activeMinutes?: number;
    };

/**
 * The port a capacity gate reads: anything with a `status()` returning a {@link CapacityStatus},
 * directly, as a promise, or as a neverthrow `Result`/`ResultAsync`. A work session of
 * `@keel/sessions` fits it as `{ status: () => workSessions.status(scope) }`, so `@keel/budget`
 * does not depend on that package.
 */
export interface CapacitySource {
  status(): unknown;
}

/** Options of {@link createCapacityGate}. */
export interface CapacityGateOptions {
  /** The session hygiene counters. */
  sessions: CapacitySource;
  /** Tool calls a session may make before budgeted tasks are refused. Default 200. */
  maxToolCalls?: number;
  /** Active minutes a session may last before budgeted tasks are refused. Default 180. */
  maxActiveMinutes?: number;
  /**
   * How to recover, as the refusals say it (in the message and `details.recovery`), so that a
   * host can name its own action, e.g. `call keel.openWorkSession({ missionId, model })`.
   */
  recovery?: {
    /** After `no_session`. Default: `open a work session, then admit the task again`. */
    noSession?: string;
    /** After `capacity_refused`. Default: `write a handoff, checkpoint and open a fresh session, then admit the task again`. */
    capacityRefused?: string;
  };
}

/** A task asking to be admitted. */
export interface TaskAdmissionRequest {
  /** The task's id, named in refusals. */
  taskId: string;
  /** The budget the task declared; `null` or left out when it declared none. */
  budget?: Limits | null;
}

/** What is left of a session's capacity. */
export interface CapacityRemaining {
  /**
   * Tool calls left, or `null` when the session's tool calls are unknown (some turns' backends
   * did not report them): what is left cannot be known, and is never computed from a 0.
   */
  toolCalls: number | null;
  activeMinutes: number;
}

/** An admitted task. */
export interface Admission {
  admitted: true;
  /** `no_budget`: admitted without a check; `within_capacity`: the open session has room. */
  reason: "no_budget" | "within_capacity";
  /** What is left of the session's capacity (`null` when it was not checked). */
  remaining: CapacityRemaining | null;
}

/** Admits budgeted tasks only into an open work session that has capacity left. */
export interface CapacityGate {
  /**
   * Admits a task. A task without a budget is admitted as before. A task that declared a budget
   * needs an open work session (`no_session` otherwise: no session is never "unlimited") within
   * both capacities (`capacity_refused` otherwise, naming the limit and its value). Both refusals
   * say how to recover in `details.recovery`.
   *
   * Unknown tool calls are never counted as 0: the tool-call limit is checked against the calls
   * that were reported (a lower bound: reaching the limit with them is reaching it), the
   * admission reports `remaining.toolCalls: null` (unknown), and active minutes — always known —
   * bound the session.
   */
  admit(request: TaskAdmissionRequest): ResultAsync<Admission, KeelError>;
  /** What is left of the current session's capacity (`no_session` when none is open). */
  remaining(): ResultAsync<CapacityRemaining, KeelError>;
}

const OptionsSchema = z.strictObject({
  sessions: z.custom<CapacitySource>(
    (value) => typeof (value as CapacitySource | undefined)?.status === "function",
    "sessions must have a status() method (e.g. { status: () => workSessions.status(scope) } over @keel/sessions)",
  ),
  maxToolCalls: z.number().int().positive().optional(),
  maxActiveMinutes: z.number().positive().optional(),
  recovery: z
    .strictObject({ noSession: z.string().min(1).max(1024).optional(), capacityRefused: z.string().min(1).max(1024).optional() })
    .optional(),
});

const RequestSchema = z.strictObject({
  taskId: z.string().min(1).max(256),
  budget: LimitsSchema.nullable().optional(),
});

const StatusSchema = z.union([
  z.looseObject({
    state: z.literal("open"),
    toolCalls: z.number().int().nonnegative().nullable(),
    turnsWithoutToolCalls: z.number().int().nonnegative().nullable().optional(),
    activeMinutes: z.number().nonnegative(),
  }),
  z.looseObject({ state: z.literal("no_session") }),
]);

/**
 * Creates a capacity gate over a work session's hygiene counters. Continuity is not hygiene: the
 * gate never stops a handoff from being written, it only refuses to start budgeted work in a
 * session that is missing or used up.
 *
 * @throws KeelError `invalid_input` for malformed options.
 *
 * @example
 * ```ts
 * const sessions = { status: () => workSessions.status({ missionId: "m-1", role: "engineer" }) };
 * const gate = createCapacityGate({ sessions, maxToolCalls: 200, maxActiveMinutes: 180 });
 * const admitted = await gate.admit({ taskId: "task-7", budget: { tokens: 50_000 } });
 * if (admitted.isErr() && admitted.error.code === "no_session") { ... open a session ... }
 * ```
 */
export function createCapacityGate(options: CapacityGateOptions): CapacityGate {
  const valid = validateOrThrow(OptionsSchema, options, "capacity gate options");
  const maxToolCalls = valid.maxToolCalls ?? 200;
  const maxActiveMinutes = valid.maxActiveMinutes ?? 180;
  const recovery = {
    noSession: valid.recovery?.noSession ?? "open a work session, then admit the task again",
    capacityRefused: valid.recovery?.capacityRefused ?? "write a handoff, checkpoint and open a fresh session, then admit the task again",
  };
  const readStatus = (): ResultAsync<CapacityStatus, KeelError> => readCapacityStatus(valid.sessions);
  const check = (taskId: string | null): ResultAsync<CapacityRemaining, KeelError> =>
    readStatus().andThen((status) => {
      if (status.state !== "open") return errAsync(noSession(taskId, recovery.noSession));
      // The reported tool calls are a lower bound when some are unknown: reaching the limit with them is reaching it.
      const reported = status.toolCalls;
      const known = reported !== null && (status.turnsWithoutToolCalls ?? 0) === 0;
      const exceeded = [
        ...(reported === null ? [] : [{ limit: "maxToolCalls", value: maxToolCalls, current: reported }]),
        { limit: "maxActiveMinutes", value: maxActiveMinutes, current: status.activeMinutes },
      ].filter((entry) => entry.current >= entry.value);
      if (exceeded.length > 0) return errAsync(capacityRefused(taskId, exceeded, recovery.capacityRefused));
      return okAsync({ toolCalls: known ? maxToolCalls - reported : null, activeMinutes: maxActiveMinutes - status.activeMinutes });
    });
  return Object.freeze({
    admit(request: TaskAdmissionRequest): ResultAsync<Admission, KeelError> {
      const checked = validate(RequestSchema, request, "task admission request");
      if (checked.isErr()) return errAsync(checked.error);
      if (checked.value.budget == null) return okAsync({ admitted: true as const, reason: "no_budget" as const, remaining: null });
      return check(checked.value.taskId).map((remaining) => ({ admitted: true as const, reason: "within_capacity" as const, remaining }));
    },
    remaining: () => check(null),
  });
}

/** Calls `source.status()` and checks what it returns, whatever form it takes. */
function readCapacityStatus(source: CapacitySource): ResultAsync<CapacityStatus, KeelError> {
  const call = ResultAsync.fromThrowable(
    async () => source.status(),
    (error) => toKeelError(error, "unavailable", "reading the session status failed"),
  );
  return call().andThen((value) => {
    const unwrapped = unwrapResult(value);
    if (unwrapped.kind === "error") return errAsync(unwrapped.error);
    const status = validate(StatusSchema, unwrapped.value, "session status");
    return status.isErr() ? errAsync(status.error) : okAsync(status.value as CapacityStatus);
  });
}

type Unwrapped = { kind: "value"; value: unknown } | { kind: "error"; error: KeelError };

/** Unwraps a neverthrow `Result` (awaited `ResultAsync`); other values pass through. */
function unwrapResult(value: unknown): Unwrapped {
  const result = value as { isOk?: unknown; isErr?: () => boolean; value?: unknown; error?: unknown } | null;
  if (typeof result?.isOk !== "function" || typeof result.isErr !== "function") return { kind: "value", value };
  if (!result.isErr()) return { kind: "value", value: result.value };
  return { kind: "error", error: toKeelError(result.error, "unavailable", "reading the session status failed") };
}

function noSession(taskId: string | null, recovery: string): KeelError {
  const who = taskId === null ? "capacity was asked" : `task "${taskId}" declared a budget`;
  return new KeelError("no_session", `${who} but no work session is open: ${recovery} (no session is never "unlimited")`, {
    details: { taskId, recovery },
  });
}

function capacityRefused(taskId: string | null, exceeded: { limit: string; value: number; current: number }[], recovery: string): KeelError {
  const first = exceeded[0]!;
  const who = taskId === null ? "the session" : `task "${taskId}"`;
  return new KeelError(
    "capacity_refused",
    `${who} is refused: the work session reached ${first.limit} ${first.value} (at ${first.current}); ` +
      `${recovery}`,
    {
      details: {
        taskId,
        limit: first.limit,
        value: first.value,
        current: first.current,
        exceeded: exceeded as unknown as JsonValue[],
        recovery,
      },
    },
  );
}
