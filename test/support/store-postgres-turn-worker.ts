/**
 * Multi-host worker (one process standing for one host): after "go" on stdin, runs `turns` role
 * turns through `createKeel` over a shared PostgreSQL schema, alternating between two missions
 * that every worker also works on, with a mission budget of `limit` calls shared by all. Each
 * successful turn is appended to a shared log. Prints `turn <mission> <role>` per success,
 * `refused <mission>` per `budget_exceeded`, then `done` and exits; any other error fails it.
 *
 * Usage: store-postgres-turn-worker.ts <connection string> <schema> <worker index> <turns> <limit>
 */
import { createScriptedBackend } from "@keel/backends/scripted";
import { createKeel } from "@keel/runtime";
import { createPostgresStore } from "@keel/store-postgres";

const [connectionString, schema, indexText, turnsText, limitText] = process.argv.slice(2);
if (!connectionString || !schema || !indexText || !turnsText || !limitText) throw new Error("usage: store-postgres-turn-worker.ts <url> <schema> <index> <turns> <limit>");
const index = Number(indexText);
const store = createPostgresStore({ connectionString, schema, poolSize: 2 });
const backend = createScriptedBackend({ resumable: true, script: (turn) => `Worked on: ${turn.prompt.split("\n").at(-1)}\nDecision: call ${turn.call} done` });
const keel = createKeel({ store, backends: [backend], policy: "fresh", budget: { mission: { calls: Number(limitText) } } });
process.stdout.write("loaded\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

for (let turn = 0; turn < Number(turnsText); turn++) {
  const missionId = `shared-${(index + turn) % 2}`;
  // Two workers per role: the role lease serializes their turns on one capsule.
  const role = `role-${index % 4}`;
  const outcome = await keel.runRoleTurn({ missionId, role, prompt: `task ${index}.${turn}`, objective: "Share one budget" });
  if (outcome.isErr()) {
    if (outcome.error.code !== "budget_exceeded") throw outcome.error;
    process.stdout.write(`refused ${missionId}\n`);
    continue;
  }
  const appended = await store.logs.append(["shared", "turns"], [{ id: `w${index}-${turn}`, value: { missionId, role } }]);
  if (appended.isErr()) throw appended.error;
  process.stdout.write(`turn ${missionId} ${role}\n`);
}
await keel.close();
await store.close();
process.stdout.write("done\n");
