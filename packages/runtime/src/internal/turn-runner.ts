import type { Clock, KeelError } from "@keel/core";
import type { Backend } from "@keel/backend";
import type { Budget } from "@keel/budget";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import type { RoleTurnResult } from "../role-turn.js";
import type { WorkSessionRuntime } from "../work-session-runtime.js";
import { declareScopes } from "./turn-budget.js";
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

/**
 * `Keel.runRoleTurn`: plan (pure) → declare the budget scopes → capacity gate → mission
 * checkpoint → reserve → run the backend turn → settle. A failure after the reservation abandons
 * it; each step hands its warnings on as data, and the result lists them in step order.
 */
export function createRoleTurnRunner(parts: RoleTurnRunnerParts): (input: unknown) => ResultAsync<RoleTurnResult, KeelError> {
  const { workSessions } = parts;
  return (input) => {
    const planned = planRoleTurn(input, parts.plan);
    if (planned.isErr()) return errAsync(planned.error);
    const { turn, backend, reserve } = planned.value;
    const scope = declareScopes(parts.budget, planned.value.scopes);
    if (scope.isErr()) return errAsync(scope.error);
    const startedAt = parts.clock.now();
    return workSessions
      .admit({ missionId: turn.missionId, role: turn.role, taskId: turn.taskId ?? null, budget: turn.budget })
      .andThen(() => workSessions.ensureMissionCheckpoint(turn.missionId))
      .andThen((warnings) =>
        scope.value.reserve(reserve).andThen((reservation) =>
          runBackendTurn(parts.run, turn, backend)
            .andThen((run) => settleRoleTurn(parts.settle, { turn, reservation, run, startedAt, warnings }))
            .orElse((error) => reservation.abandon().orElse(() => okAsync(undefined)).andThen(() => errAsync(error))),
        ),
      );
  };
}
