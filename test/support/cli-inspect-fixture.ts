import { createEventBus, createManualClock, type KeelError } from "@keel/core";
import { createBudget } from "@keel/budget";
import { createRoleSessions, type TurnOutcome, type TurnPlan } from "@keel/sessions";
import { createFsStore } from "@keel/store-fs";
import { createEventLog } from "@keel/telemetry";
import { okAsync, type ResultAsync } from "neverthrow";

/** A provider stand-in: a new thread per fresh turn. */
function execute(plan: TurnPlan): ResultAsync<TurnOutcome, KeelError> {
  const threadId = plan.threadId ?? `thread-${plan.role}-${plan.turn}`;
  return okAsync({
    text: `turn ${plan.turn}`,
    threadId,
    usage: { inputUncached: 1000 * plan.turn, cacheRead: 0, cacheWrite: 0, output: 10, reasoning: null, costUsd: null },
    promptBytes: plan.action === "resumed" ? 40 : 400,
    decisiveOutput: `output of turn ${plan.turn}`,
    paths: { referenced: [`src/file-${plan.turn}.ts`], inspected: ["README.md"] },
    openCheckpointItems: [`item of ${plan.role} ${plan.turn}`],
  });
}

/**
 * Writes a realistic store through the real domain packages: mission `m1` with an engineer
 * (3 rolling turns on codex) and a planner (1 turn), a checkpoint, a handoff, a budget ledger
 * with a mission and a role scope, and an event log.
 */
export async function writeSampleStore(dir: string): Promise<void> {
  const clock = createManualClock(1_700_000_000_000);
  const events = createEventBus({ clock });
  const store = createFsStore({ dir, clock });
  const eventLog = createEventLog({ store });
  const detach = eventLog.attach(events);
  const sessions = createRoleSessions({ store, events, clock, policy: "rolling" });
  (await sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
  const engineer = { missionId: "m1", role: "engineer", backend: { id: "codex", resumable: true }, model: "gpt-5", branch: "main", objectiveRevision: 2 };
  for (let turn = 0; turn < 3; turn++) {
    clock.advance(1000);
    (await sessions.runTurn(engineer, execute))._unsafeUnwrap();
  }
  (await sessions.runTurn({ ...engineer, role: "planner", model: null, branch: null }, execute))._unsafeUnwrap();
  (await sessions.writeHandoff("m1", "engineer", { done: ["parser"], inFlight: [{ task: "tests", state: "half" }], nextSteps: ["review"], warnings: [] }))._unsafeUnwrap();
  const budget = createBudget({ store, clock, events });
  const mission = budget.scope("mission.m1", { limits: { tokens: 100_000, calls: 20 } });
  const role = budget.scope("role.engineer", { parents: [mission], limits: [{ name: "role", limits: { tokens: 30_000 } }] });
  const settled = (await role.reserve({ tokens: 5_000, calls: 1 }))._unsafeUnwrap();
  (await settled.settle({ tokens: 4_000 }))._unsafeUnwrap();
  (await role.reserve({ tokens: 2_000, calls: 1 }))._unsafeUnwrap();
  await sessions.close();
  (await eventLog.flush())._unsafeUnwrap();
  detach();
  await store.close();
}
