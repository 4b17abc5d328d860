import { totalInputTokens, type Clock, type EventBus, type KeelError } from "@keel/core";
import type { Reservation } from "@keel/budget";
import { ResultAsync } from "neverthrow";
import type { RoleTurnResult, RuntimeWarning } from "../role-turn.js";
import { countToolCalls, type WorkSessionRuntime } from "../work-session-runtime.js";
import { fileAccessEvents } from "./file-access-events.js";
import { settleReservation } from "./turn-budget.js";
import type { CheckedTurn } from "./turn-plan.js";
import type { TurnRun } from "./turn-run.js";

/** The runtime's parts that settle a turn. */
export interface TurnSettleParts {
  events: EventBus;
  clock: Clock;
  cwd: string;
  workSessions: WorkSessionRuntime;
}

/** A backend turn that ran, with what the steps before it left to settle. */
export interface TurnToSettle {
  turn: CheckedTurn;
  /** The reservation the turn took before calling its backend (a turn that ran always has one). */
  reservation: Reservation | undefined;
  run: TurnRun;
  /** When the turn started (the clock's time before the capacity gate). */
  startedAt: number;
  /** The warnings of the steps before the run (the mission checkpoint's). */
  warnings: RuntimeWarning[];
}

/**
 * Settles a turn that ran: the budget reservation, the `agent.io.*` events, the turn counted in
 * its work session, then the result. Settling and counting failures are warnings, after the
 * earlier steps' and the run's, in that order.
 */
export function settleRoleTurn(parts: TurnSettleParts, settling: TurnToSettle): ResultAsync<RoleTurnResult, KeelError> {
  const { turn, run } = settling;
  const last = run.backendResult;
  const model = turn.model ?? null;
  return settleReservation(settling.reservation, run.outcome.usage, model, last?.durationMs ?? null)
    .andThen((settled) =>
      ResultAsync.fromSafePromise(fileAccessEvents(parts.cwd, turn, last, run.outcome.paths?.inspected ?? [])).map((accesses) => {
        for (const access of accesses) parts.events.emit(access);
        return settled.warnings;
      }),
    )
    .andThen((settleWarnings) =>
      parts.workSessions
        .recordTurn({ missionId: turn.missionId, role: turn.role, startedAt: settling.startedAt, endedAt: parts.clock.now(), backendResult: last, usage: run.outcome.usage, model, taskId: turn.taskId ?? null })
        .map(
          (recorded): RoleTurnResult => ({
            text: run.outcome.text,
            threadId: run.outcome.threadId,
            usage: run.outcome.usage,
            inputTokens: totalInputTokens(run.outcome.usage),
            promptBytes: run.outcome.promptBytes,
            plan: run.plan,
            durationMs: last?.durationMs ?? 0,
            fileAccess: last?.fileAccess ?? [],
            toolCalls: countToolCalls(last),
            skillDelivery: run.delivery,
            warnings: [...settling.warnings, ...run.warnings, ...settleWarnings, ...recorded.warnings],
            workSessionId: recorded.value,
            superseded: run.superseded,
          }),
        ),
    );
}
