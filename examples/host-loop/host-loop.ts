/**
 * Embedding Keel in a host's own agent loop: the host owns the loop, the model and the UI; Keel
 * decides the session action of each role turn, keeps the capsules on the filesystem store,
 * reserves budget before every turn, and records a handoff when the budget says stop — so that
 * the next run (another process, tomorrow) picks the work up where it was left.
 */
import { createScriptedBackend } from "@keel/backends/scripted";
import { createKeel } from "@keel/runtime";

/** What one run of the host loop did. */
export interface HostRun {
  roundsCompleted: number;
  stoppedBy: "done" | "budget_exceeded";
  verdicts: string[];
}

/** Runs up to `rounds` rounds of one mission in `dir`, within `maxCalls` backend calls. */
export async function runHostLoop(options: { dir: string; rounds: number; maxCalls: number }): Promise<HostRun> {
  const backend = createScriptedBackend({
    resumable: true,
    script: (turn) => (turn.prompt.includes("Review") ? "Verdict: APPROVE\nDecision: approve" : `Decision: did "${turn.prompt.split("\n").at(-1)}"`),
  });
  const keel = createKeel({ dir: options.dir, backends: [backend], policy: "rolling", budget: { mission: { calls: options.maxCalls } } });
  const run: HostRun = { roundsCompleted: 0, stoppedBy: "done", verdicts: [] };
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const result = await keel.runRound({
        missionId: "release-1",
        round,
        objective: "Prepare release 1.0",
        planner: { prompt: `Plan round ${round}.` },
        engineer: { prompt: (context) => `Do: ${context.planner?.text ?? ""}` },
        reviewer: { prompt: (context) => `Review: ${context.engineer?.text ?? ""}` },
      });
      if (result.isErr()) {
        if (result.error.code !== "budget_exceeded") throw result.error;
        // Out of budget: leave a handoff (always allowed, resets nothing) and stop loudly.
        run.stoppedBy = "budget_exceeded";
        await keel.sessions.writeHandoff("release-1", "engineer", {
          done: [`${run.roundsCompleted} rounds`],
          inFlight: [{ task: `round ${round}`, state: "not started: budget exhausted" }],
          nextSteps: ["raise the mission budget, then continue"],
          warnings: [result.error.message],
        });
        break;
      }
      run.roundsCompleted = round;
      run.verdicts.push(result.value.verdict);
    }
  } finally {
    await keel.close();
  }
  return run;
}
