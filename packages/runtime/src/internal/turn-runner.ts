import { KeelError, validate, type Clock } from "@keel/core";
import { safeTurnListener, type Backend, type BackendTurnListener } from "@keel/backend";
import type { Budget, Reservation } from "@keel/budget";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import type { RoleTurnResult } from "../role-turn.js";
import { TurnOptionsSchema, type TurnOptions } from "../turn-options.js";
import type { WorkSessionRuntime } from "../work-session-runtime.js";
import { abortedBefore } from "./turn-attempt.js";
import { declareScopes, reserveOnFirstCall } from "./turn-budget.js";
import { planRoleTurn, type TurnPlanSettings } from "./turn-plan.js";
import { runBackendTurn, type TurnRunParts } from "./turn-run.js";
import { settleRoleTurn, type TurnSettleParts } from "./turn-settle.js";

/** The runtime's parts a role turn goes through. */
export interface RoleTurnRunnerParts {
  plan: TurnPlanSettings<Backend>;
  budget: Budget;
  clock: Clock;
  workSessions: WorkSessionRuntime;
  run: TurnRunParts;
  settle: TurnSettleParts;
}

/** What a backend attempt gets from the caller's {@link TurnOptions}: the signal and the listener, ready to pass on. */
export interface TurnControls {
  signal: AbortSignal | undefined;
  onEvent: BackendTurnListener | undefined;
}

/**
 * `Keel.runRoleTurn`: plan (pure) → declare the budget scopes → capacity gate → mission
 * checkpoint → run the backend turn (skills, the role's lease, the prompt, then the reservation
 * right before the backend is called) → settle. A turn that fails before its backend is called
 * reserved nothing, so its failure leaves the budget as it was; a failure after the reservation
 * abandons it, except an abort, whose reservation is settled with the time used. Each step hands
 * its warnings on as data, and the result lists them in step order.
 */
export function createRoleTurnRunner(parts: RoleTurnRunnerParts): (input: unknown, options?: TurnOptions) => ResultAsync<RoleTurnResult, KeelError> {
  const { workSessions } = parts;
  return (input, options = {}) => {
    const planned = planRoleTurn(input, parts.plan);
    if (planned.isErr()) return errAsync(planned.error);
    const checkedOptions = validate(TurnOptionsSchema, options, "turn options");
    if (checkedOptions.isErr()) return errAsync(checkedOptions.error);
    const { turn, backend, backendId, reserve } = planned.value;
    const { signal, onProgress } = options;
    if (signal?.aborted) return errAsync(abortedBefore(turn, backendId, "it started"));
    const progress = onProgress ? safeTurnListener((event) => onProgress({ ...event, missionId: turn.missionId, role: turn.role, backend: backendId })) : undefined;
    const controls: TurnControls = { signal, onEvent: progress };
    const scope = declareScopes(parts.budget, planned.value.scopes);
    if (scope.isErr()) return errAsync(scope.error);
    const startedAt = parts.clock.now();
    return workSessions
      .admit({ missionId: turn.missionId, role: turn.role, taskId: turn.taskId ?? null, budget: turn.budget })
      .andThen(() => workSessions.ensureMissionCheckpoint(turn.missionId))
      .andThen((warnings) => {
        const reservation = reserveOnFirstCall(scope.value, reserve);
        return runBackendTurn(parts.run, turn, backend, controls, reservation)
          .andThen((run) => settleRoleTurn(parts.settle, { turn, reservation: reservation.made(), run, startedAt, warnings }))
          .orElse((error) =>
            closeFailed(reservation.made(), error, parts.clock)
              .orElse(() => okAsync(undefined))
              .andThen(() => errAsync(error)),
          );
      });
  };
}

/**
 * Closes the reservation of a turn that failed: none was made when the turn failed before its
 * backend was called, so there is nothing to close; an aborted turn is settled with the time it
 * used (its tokens and cost are unknown, so they stay charged as reserved); any other failure
 * abandons it (the outcome is unknown, the whole reservation stays charged).
 */
function closeFailed(reservation: Reservation | undefined, error: KeelError, clock: Clock): ResultAsync<unknown, KeelError> {
  if (!reservation) return okAsync(undefined);
  if (error.code !== "aborted") return reservation.abandon();
  return reservation.settle({ tokens: null, timeMs: Math.max(0, clock.now() - reservation.reservedAt), costMicroUsd: null });
}
