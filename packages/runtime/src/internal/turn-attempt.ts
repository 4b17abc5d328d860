import { KeelError, utf8Bytes } from "@keel/core";
import type { Backend, BackendTurnRequest, BackendTurnResult } from "@keel/backend";
import type { TurnOutcome, TurnPlan } from "@keel/sessions";
import { discoverInstructions, renderInstructions } from "@keel/skills";
import type { KeelStore } from "@keel/store";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import type { KeelOptions } from "../keel-options.js";
import { buildRolePrompt, readReportLines } from "../prompt-builder.js";
import type { RuntimeWarning } from "../role-turn.js";
import { readResumeState, writeResumeState } from "./backend-thread-state.js";
import type { TurnReservation } from "./turn-budget.js";
import type { CheckedTurn } from "./turn-plan.js";
import type { TurnControls } from "./turn-runner.js";
import type { TurnSkills } from "./turn-skills.js";
import { warnOnError, type Warned } from "./turn-warnings.js";

/** What one backend attempt needs besides its session plan. */
export interface AttemptContext {
  store: KeelStore;
  cwd: string;
  turnTimeoutMs: number;
  instructions: KeelOptions["instructions"];
  turn: CheckedTurn;
  backend: Backend;
  skills: TurnSkills;
  /** The caller's abort signal and progress listener, passed to the backend as they are. */
  controls: TurnControls;
  /** The turn's budget reservation, taken right before the backend is called. */
  reservation: TurnReservation;
}

/** A finished attempt: the outcome the session records, the backend's own result, the warnings raised. */
export interface AttemptDone {
  outcome: TurnOutcome;
  backendResult: BackendTurnResult;
  warnings: RuntimeWarning[];
}

/** A failed attempt: the error, and the warnings raised before it. */
export interface AttemptFailed {
  error: KeelError;
  warnings: RuntimeWarning[];
  /** The error is the backend call's (not the prompt's). */
  atBackend?: true;
}

/**
 * Runs one backend attempt of a session plan: the project's instructions when the backend needs
 * them, the prompt, the thread's kept resume state, the turn's budget reservation, the backend,
 * then the new resume state kept. Failing to discover instructions or to read or write resume
 * state is a warning; a bad prompt, a signal that fired before the backend was called
 * (`aborted`), a refused reservation (`budget_exceeded`) or the backend's failure fails the
 * attempt. Only the backend's failure comes after the reservation.
 */
export function runAttempt(context: AttemptContext, plan: TurnPlan): ResultAsync<AttemptDone, AttemptFailed> {
  const { turn, backend, store, cwd } = context;
  return projectInstructions(context, plan).andThen((instructions) => {
    const prompt = buildRolePrompt({
      instructions: instructions.value,
      role: turn.role,
      missionId: turn.missionId,
      action: plan.action,
      task: turn.prompt,
      objective: turn.objective ?? null,
      objectiveRevision: turn.objectiveRevision ?? 1,
      capsule: plan.capsule,
      skillContract: context.skills.contract,
    });
    if (prompt.isErr()) return errAsync<AttemptDone, AttemptFailed>({ error: prompt.error, warnings: instructions.warnings });
    const promptText = prompt.value.text;
    // The adapter's state for the thread (e.g. Codex's running usage total), kept from its last turn.
    const kept = plan.threadId
      ? warnOnError(readResumeState(store, turn.missionId, turn.role, backend.id, plan.threadId), undefined, "backend", "read_resume_state")
      : okAsync<Warned<undefined>, never>({ value: undefined, warnings: [] });
    return kept.andThen(({ value: resumeState, warnings: reading }) => {
        const before = [...instructions.warnings, ...reading];
        const request: BackendTurnRequest = {
          prompt: promptText,
          cwd,
          timeoutMs: context.turnTimeoutMs,
          ...(turn.model ? { model: turn.model } : {}),
          ...(plan.threadId ? { threadId: plan.threadId } : {}),
          ...(plan.threadId && resumeState ? { resumeState } : {}),
          ...(context.skills.skillPaths.length > 0 ? { skillPaths: context.skills.skillPaths } : {}),
        };
        // The last step before the backend: an abort while the turn waited (for the role's lease) reserves nothing.
        const reached: ResultAsync<unknown, KeelError> = context.controls.signal?.aborted ? errAsync(abortedBefore(turn, backend.id, "its backend was called")) : context.reservation.take();
        return reached
          .mapErr((error): AttemptFailed => ({ error, warnings: before }))
          .andThen(() => backend.runTurn(request, context.controls.signal, context.controls.onEvent).mapErr((error): AttemptFailed => ({ error, warnings: before, atBackend: true })))
          .andThen((result) =>
            warnOnError(writeResumeState(store, turn.missionId, turn.role, backend.id, result.threadId, result.resumeState), undefined, "backend", "write_resume_state")
              .map(({ warnings: writing }): AttemptDone => ({
                outcome: { text: result.text, threadId: result.threadId, usage: result.usage, promptBytes: utf8Bytes(promptText), ...readReportLines(result.text) },
                backendResult: result,
                warnings: [...before, ...writing],
              })),
          );
      });
  });
}

/**
 * The project's instruction files, rendered, for a backend that does not load them itself
 * (capability `instructions: "prompt"`) on a turn that starts a thread; `null` otherwise. A
 * failed discovery is an `instructions`/`discover` warning, never a failed turn.
 */
function projectInstructions(context: AttemptContext, plan: TurnPlan): ResultAsync<Warned<string | null>, never> {
  const { instructions } = context;
  if (instructions === false || context.backend.capabilities.instructions !== "prompt" || plan.action === "resumed") return okAsync<Warned<string | null>, never>({ value: null, warnings: [] });
  const found = discoverInstructions({ cwd: context.cwd, ...(instructions ?? {}) })
    .andThen((discovered) => renderInstructions(discovered.files))
    .map((text): string | null => (text === "" ? null : text));
  return warnOnError(found, null, "instructions", "discover");
}

/** The `aborted` error of a turn whose signal fired before `moment`: its backend never ran, and it reserved nothing. */
export function abortedBefore(turn: Pick<CheckedTurn, "missionId" | "role">, backend: string, moment: string): KeelError {
  const { missionId, role } = turn;
  return new KeelError("aborted", `the ${role} turn of mission "${missionId}" was aborted before ${moment}: nothing ran`, {
    details: { missionId, role, backend },
  });
}
