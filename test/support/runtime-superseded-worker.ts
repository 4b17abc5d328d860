/**
 * A host whose role turn is superseded: opens the store URL, runs one `engineer` turn of mission
 * `m1` under a 1 s role lease whose backend prints `working` and then waits for a line on stdin
 * (the test stops the process with SIGSTOP meanwhile, and another host takes the role over).
 * Then it prints `result <json>`: the turn's `superseded`, planned turn number, text and
 * warnings, and its `role.session.turn` event.
 *
 * Usage: runtime-superseded-worker.ts <store URL>
 */
import { createEventBus, emptyUsage, newId, type KeelEvent } from "@keel/core";
import type { Backend, BackendTurnResult } from "@keel/backend";
import { createKeel, openStore } from "@keel/runtime";
import { ResultAsync } from "neverthrow";

const [url] = process.argv.slice(2);
if (!url) throw new Error("usage: runtime-superseded-worker.ts <store URL>");
const store = (await openStore(url))._unsafeUnwrap();

const backend: Backend = {
  id: "waiting",
  capabilities: { resume: true, skills: "prompt", usage: "full" },
  runTurn: (request) =>
    ResultAsync.fromSafePromise(
      (async (): Promise<BackendTurnResult> => {
        process.stdout.write("working\n");
        await new Promise((resolve) => process.stdin.once("data", resolve));
        process.stdin.pause();
        return { text: "Decision: the stalled host's work", threadId: request.threadId ?? newId(), usage: emptyUsage(), durationMs: 1, exitCode: 0, fileAccess: [], toolCalls: 0 };
      })(),
    ),
};
const events = createEventBus();
const turnEvents: KeelEvent[] = [];
events.on("role.session.turn", (event) => turnEvents.push(event));
const keel = createKeel({ store, events, backends: [backend], policy: "rolling", roleLease: { ttlMs: 1_000, renewIntervalMs: 200 } });
const turn = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Do the work.", objective: "Ship" }))._unsafeUnwrap();
process.stdout.write(
  `result ${JSON.stringify({ superseded: turn.superseded, turn: turn.plan.turn, text: turn.text, warnings: turn.warnings.map(({ target, operation, code }) => `${target} ${operation} ${code}`), events: turnEvents })}\n`,
);
await keel.close();
await store.close();
