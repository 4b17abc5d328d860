import { createEventBus, type RoleSessionTurnEvent } from "@keel/core";
import { createRoleSessions, type SessionPolicy, type RoleSessionTurnResult } from "@keel/sessions";
import type { KeelStore } from "@keel/store";
import { ROLES, taskFor } from "./sessions-mission-script.js";
import { createScriptedProvider, scriptedExecute } from "./sessions-scripted-provider.js";

/** What one scripted mission run recorded. */
export interface MissionRun {
  events: RoleSessionTurnEvent[];
  results: Record<(typeof ROLES)[number], RoleSessionTurnResult[]>;
  /** Thread ids per role after the round before the restart. */
  threadsBeforeRestart: Record<string, string | null>;
}

/**
 * Runs the scripted mission (Planner, Engineer, Reviewer each round) for `rounds` rounds under a
 * policy. After round `restartAfter`, the host "restarts": `reopen` gives a new store on the same
 * data, and a new `createRoleSessions` continues from what is durable. The provider keeps its
 * threads across the restart, as a real provider does.
 */
export async function runMission(options: {
  policy: SessionPolicy;
  rounds: number;
  restartAfter: number;
  open: () => KeelStore | Promise<KeelStore>;
}): Promise<MissionRun> {
  const provider = createScriptedProvider({ resumable: true });
  const events = createEventBus();
  const recorded: RoleSessionTurnEvent[] = [];
  events.on("role.session.turn", (event) => recorded.push(event));
  let store = await options.open();
  let sessions = createRoleSessions({ store, events, policy: options.policy });
  (await sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
  const results: MissionRun["results"] = { planner: [], engineer: [], reviewer: [] };
  const threadsBeforeRestart: Record<string, string | null> = {};
  for (let round = 1; round <= options.rounds; round++) {
    for (const role of ROLES) {
      const handle = sessions.forRole("m1", role)._unsafeUnwrap();
      const result = await handle.runTurn(
        { backend: { id: "scripted", resumable: true }, model: "scripted-1", branch: "main", objectiveRevision: 1 },
        scriptedExecute(provider, taskFor(role, round)),
      );
      results[role].push(result._unsafeUnwrap());
      if (round === options.restartAfter) threadsBeforeRestart[role] = result._unsafeUnwrap().outcome.threadId;
    }
    if (round === options.restartAfter) {
      await store.close();
      store = await options.open();
      sessions = createRoleSessions({ store, events, policy: options.policy });
    }
  }
  await store.close();
  return { events: recorded, results, threadsBeforeRestart };
}
