import { KeelError, validate } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import type { RunDoc } from "./run-state.js";

/**
 * Work a step left behind when its process died: budget reservations it opened and never
 * settled (the outcome of those calls is unknown), and calls it journaled past the run's last
 * commit (their results are known and replay for free).
 */
export interface InterruptedWork {
  /** Ids of this run's open reservations not yet handed off. */
  reservations: string[];
  /** Journaled calls past the run's committed call index. */
  journaledCalls: number;
  /** The run's committed call index: where the interrupted step started. */
  fromCallIndex: number;
}

/** An open reservation as the decision needs it (what `BudgetScope.openReservations` lists). */
export interface OpenReservationInput {
  id: string;
  /** When it was made (epoch ms). */
  reservedAt: number;
}

/** The reservations a run already reported (what {@link decideInterrupted} appends to). */
const ReportedSchema = z.array(z.string()).optional();

const InterruptedInputSchema = z.strictObject({
  run: z.looseObject({ createdAt: z.number(), callIndex: z.number().int().nonnegative(), interruptedReservations: ReportedSchema }),
  reservations: z.array(z.looseObject({ id: z.string(), reservedAt: z.number() })),
  journalIndexes: z.array(z.number().int().nonnegative()),
  options: z.strictObject({ journaledCallsReplay: z.boolean().optional() }),
});

const ContinueSchema = z.boolean();

/** The fields of a run the handoff decisions read: a value without them is `invalid_input`, never a TypeError. */
const HandoffRunSchema = z.looseObject({
  runId: z.string(),
  version: z.number().int(),
  status: z.string(),
  outcome: z.looseObject({ reason: z.string() }).nullable().optional(),
  interruptedReservations: ReportedSchema,
});

/**
 * Finds interrupted work, purely: the open reservations made since the run was created that no
 * earlier step of the run already reported, with the journaled calls past its committed call
 * index. `undefined` when there is no such reservation (the usual case): journaled calls alone
 * are no interruption, since replaying them pays nothing, unless `journaledCallsReplay` is false
 * (the journal keeps digests only). `invalid_input` for inputs of the wrong shape.
 */
export function findInterruptedWork(
  run: Pick<RunDoc, "createdAt" | "callIndex" | "interruptedReservations">,
  reservations: readonly OpenReservationInput[],
  journalIndexes: readonly number[],
  options: { journaledCallsReplay?: boolean } = {},
): Result<InterruptedWork | undefined, KeelError> {
  const checked = validate(InterruptedInputSchema, { run, reservations, journalIndexes, options }, "interrupted work");
  if (checked.isErr()) return err(checked.error);
  // Read from the checked copy: a caller's getter or proxy is read once, inside the check.
  const input = checked.value;
  const known = new Set(input.run.interruptedReservations ?? []);
  const open = input.reservations.filter((reservation) => reservation.reservedAt >= input.run.createdAt && !known.has(reservation.id)).map((reservation) => reservation.id);
  const journaledCalls = input.journalIndexes.filter((index) => index >= input.run.callIndex).length;
  // Journaled calls replay for free, unless the journal keeps their digests only (`journaledCallsReplay: false`): then running them again pays again.
  const replayable = input.options.journaledCallsReplay !== false;
  if (open.length === 0 && (replayable || journaledCalls === 0)) return ok(undefined);
  return ok({ reservations: open, journaledCalls, fromCallIndex: input.run.callIndex });
}

/** Input of {@link decideInterrupted}. */
export interface InterruptedDecisionInput {
  /** The stage whose call would run again live (the interrupted stage). */
  stage: string;
  /** Its skill. */
  skill: string;
  work: InterruptedWork;
  at: number;
}

const DecisionSchema = z.strictObject({
  stage: z.string().min(1),
  skill: z.string().min(1),
  work: z.strictObject({ reservations: z.array(z.string()), journaledCalls: z.number().int().nonnegative(), fromCallIndex: z.number().int().nonnegative() }),
  at: z.number(),
});

/**
 * Hands a run off because a step died mid-way, purely: the run keeps its last committed state
 * (position, packets, call index), becomes `handed_off` with `outcome.reason: "interrupted"`
 * naming the stage whose call would have to be paid again, and remembers the open reservations
 * it names (they stay charged; a later step does not hand off for them again). Nothing is
 * replayed or called. The caller continues it explicitly (`step` with `continueHandoff: true`),
 * starts the task again, or leaves it. `invalid_input` for a run or an input of the wrong shape.
 *
 * @example
 * ```ts
 * const next = decideInterrupted(run, { stage: "plan", skill: "plan", work, at: Date.now() });
 * // next.status === "handed_off", next.outcome.reason === "interrupted"
 * ```
 */
export function decideInterrupted(run: RunDoc, input: InterruptedDecisionInput): Result<RunDoc, KeelError> {
  const checked = validate(HandoffRunSchema, run, "run document").andThen(() => validate(DecisionSchema, input, "interrupted decision"));
  if (checked.isErr()) return err(checked.error);
  const { stage, skill, work, at } = input;
  return ok({
    ...run,
    version: run.version + 1,
    updatedAt: at,
    status: "handed_off",
    interruptedReservations: [...(run.interruptedReservations ?? []), ...work.reservations].slice(-64),
    outcome: {
      reason: "interrupted",
      message: `stage "${stage}" (skill "${skill}") was interrupted: the step running it stopped before it committed (its process died or lost its lease), and its call's outcome is unknown. It is not run again silently: step with continueHandoff: true to run it again (paid again), or start the task again`,
      details: { stage, skill, openReservations: work.reservations.length, journaledCalls: work.journaledCalls, fromCallIndex: work.fromCallIndex },
    },
  });
}

/**
 * Whether a step may run on this run, as far as handoffs go, purely: `continueHandoff` is
 * accepted only on a run handed off because it was interrupted (`conflict`, reason
 * `not_interrupted`, otherwise); without it, such a run is refused like any ended run.
 * Returns the run to step (status `ready` again when continued); `invalid_input` for a value
 * that is not a run, or a `continueHandoff` that is not a boolean.
 */
export function decideContinue(run: RunDoc, continueHandoff: boolean): Result<RunDoc, KeelError> {
  const checked = validate(HandoffRunSchema, run, "run document").andThen(() => validate(ContinueSchema, continueHandoff, "continueHandoff"));
  if (checked.isErr()) return err(checked.error);
  const interrupted = run.status === "handed_off" && run.outcome?.reason === "interrupted";
  if (!continueHandoff) return ok(run);
  if (!interrupted) {
    return err(
      new KeelError("conflict", `run ${run.runId} is ${run.status}${run.outcome ? ` (${run.outcome.reason})` : ""}, not handed off after an interruption: continueHandoff applies only to such a run; step without it`, {
        details: { runId: run.runId, status: run.status, reason: "not_interrupted" },
        retryable: false,
      }),
    );
  }
  return ok({ ...run, status: "ready", outcome: null });
}
