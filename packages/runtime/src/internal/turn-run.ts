import type { EventBus, KeelError } from "@keel/core";
import type { Backend, BackendTurnResult } from "@keel/backend";
import type { RoleSessions, TurnOutcome, TurnPlan } from "@keel/sessions";
import type { SkillLibrary } from "@keel/skills";
import type { KeelStore } from "@keel/store";
import type { ResultAsync } from "neverthrow";
import type { KeelOptions } from "../keel-options.js";
import type { RuntimeWarning } from "../role-turn.js";
import { abortedBefore, runAttempt, type AttemptContext } from "./turn-attempt.js";
import type { TurnReservation } from "./turn-budget.js";
import type { CheckedTurn } from "./turn-plan.js";
import type { TurnControls } from "./turn-runner.js";
import { prepareSkills, type TurnSkills } from "./turn-skills.js";

/** The runtime's parts a backend turn uses. */
export interface TurnRunParts {
  store: KeelStore;
  sessions: RoleSessions;
  skills: SkillLibrary | null;
  cwd: string;
  turnTimeoutMs: number;
  instructions: KeelOptions["instructions"];
  /** Where `backend.turn.failed` goes. */
  events: EventBus;
}

/** What a backend turn produced, as data for the settle step. */
export interface TurnRun {
  /** The outcome the session recorded. */
  outcome: TurnOutcome;
  /** The session plan the turn ran with (after a resume fallback, the fresh one). */
  plan: TurnPlan;
  /** The backend's result of the attempt that succeeded. */
  backendResult: BackendTurnResult | undefined;
  /** How the role's skills reached the backend, or `null` without skills. */
  delivery: TurnSkills["mode"];
  /** Skills, instructions and resume-state warnings of every attempt in order, then the session's. */
  warnings: RuntimeWarning[];
  /** The role's lease was lost during the turn: nothing of it was recorded (`RoleSessionTurnResult.superseded`). */
  superseded: boolean;
}

/**
 * Runs a planned turn's backend through the role's session: the skills delivered, then the
 * session plans the action (under the role's lease) and runs an attempt (a thread that cannot be
 * resumed is dropped and the turn retried fresh from the capsule). The first attempt that gets as
 * far as calling the backend takes `reservation`; a turn that fails before (the lease, the
 * prompt, an abort) reserved nothing. Returns the result and every warning as data.
 *
 * When the turn fails because a backend call did, emits `backend.turn.failed` once, for the call
 * whose error the turn returns (its code, `retryable` and message, the backend, mission and
 * role). A resume that fails and is retried fresh is not a failed turn: a successful retry emits
 * nothing (its `role.session.turn` says `resumeFailed`), a failed retry emits the retry's error
 * with `resumeFailed: true`. A failure before the backend ran (skills, prompt) or after it
 * (capsule save, settle) emits nothing here.
 */
export function runBackendTurn(parts: TurnRunParts, turn: CheckedTurn, backend: Backend, controls: TurnControls, reservation: TurnReservation): ResultAsync<TurnRun, KeelError> {
  return prepareSkills(parts.skills, turn.role, backend, parts.cwd).andThen(({ value: skills, warnings: skillWarnings }) => {
    const context: AttemptContext = { ...parts, turn, backend, skills, controls, reservation };
    // The session's `execute` can return only the outcome: each attempt's record is kept here, in order.
    const attempts: { warnings: RuntimeWarning[]; backendResult?: BackendTurnResult; backendError?: KeelError }[] = [];
    const execute = (plan: TurnPlan): ResultAsync<TurnOutcome, KeelError> =>
      runAttempt(context, plan)
        .map((done) => {
          attempts.push({ warnings: done.warnings, backendResult: done.backendResult });
          return done.outcome;
        })
        .mapErr((failed) => {
          attempts.push({ warnings: failed.warnings, ...(failed.atBackend ? { backendError: failed.error } : {}) });
          return failed.error;
        });
    const request = {
      missionId: turn.missionId,
      role: turn.role,
      backend: { id: backend.id, resumable: backend.capabilities.resume },
      model: turn.model ?? null,
      branch: turn.branch ?? null,
      objectiveRevision: turn.objectiveRevision ?? 1,
    };
    return parts.sessions
      // The signal ends the wait for the role's lease too: an abort there answers at once.
      .runTurn(request, execute, controls.signal === undefined ? undefined : { signal: controls.signal })
      .map(
        (session): TurnRun => ({
          outcome: session.outcome,
          plan: session.plan,
          backendResult: attempts.findLast((attempt) => attempt.backendResult !== undefined)?.backendResult,
          delivery: skills.mode,
          warnings: [...skillWarnings, ...attempts.flatMap((attempt) => attempt.warnings), ...session.warnings],
          superseded: session.superseded,
        }),
      )
      .mapErr((error) => {
        // The session returns the failed attempt's error as it is: that attempt's backend call failed the turn.
        if (attempts.at(-1)?.backendError === error) {
          parts.events.emit({
            type: "backend.turn.failed",
            backend: backend.id,
            code: error.code,
            resumeFailed: attempts.some((attempt) => attempt.backendError?.code === "resume_failed"),
            message: error.message,
            missionId: turn.missionId,
            role: turn.role,
            retryable: error.retryable,
          });
        }
        // Aborted while it waited for the role's lease: no attempt ran, and the turn says so in the runtime's words.
        if (error.code === "aborted" && attempts.length === 0 && controls.signal?.aborted === true) return abortedBefore(turn, backend.id, "it held the role's lease");
        return error;
      });
  });
}
