/**
 * A child process for the multi-process tests: opens the filesystem store at `dir`, runs
 * `turns` turns of one role, and prints one JSON line per turn. Run with
 * `node --import tsx --conditions=@keel/source test/support/sessions-turn-worker.ts '<json options>'`.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRoleSessions, type Execute, type SessionPolicy } from "@keel/sessions";
import { createFsStore } from "@keel/store-fs";
import { ResultAsync } from "neverthrow";
import { taskFor } from "./sessions-mission-script.js";
import { createScriptedProvider, scriptedExecute } from "./sessions-scripted-provider.js";

interface WorkerOptions {
  dir: string;
  missionId: string;
  role: string;
  turns: number;
  policy: SessionPolicy;
  /** "log": write start/end lines to `log` around a short pause; "scripted": the scripted provider saved in `providerFile`. */
  mode: "log" | "scripted";
  log?: string;
  /** Rendezvous: create `mine`, then wait (up to 20 s) for `other` before ending the turn. */
  rendezvous?: { mine: string; other: string };
  providerFile?: string;
  /** The first round number of the scripted tasks. */
  firstRound?: number;
}

const options = JSON.parse(process.argv[2] ?? "{}") as WorkerOptions;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function rendezvous(mine: string, other: string): Promise<void> {
  writeFileSync(mine, String(process.pid));
  const deadline = Date.now() + 20_000;
  while (!existsSync(other)) {
    if (Date.now() > deadline) throw new Error(`no rendezvous: ${other} never appeared`);
    await pause(10);
  }
}

function loggingExecute(turnIndex: number): Execute {
  return (plan) =>
    ResultAsync.fromSafePromise(
      (async () => {
        appendFileSync(options.log!, `start ${process.pid} ${plan.turn}\n`);
        if (options.rendezvous) await rendezvous(options.rendezvous.mine, options.rendezvous.other);
        else await pause(25);
        appendFileSync(options.log!, `end ${process.pid} ${plan.turn}\n`);
        return { text: `turn ${turnIndex}`, threadId: plan.threadId ?? `thread-${process.pid}-${turnIndex}`, usage: null, promptBytes: 10 };
      })(),
    );
}

const store = createFsStore({ dir: options.dir });
const sessions = createRoleSessions({ store, policy: options.policy });
const saved = options.providerFile && existsSync(options.providerFile) ? readFileSync(options.providerFile, "utf8") : undefined;
const provider = createScriptedProvider({ resumable: true, ...(saved ? { saved } : {}) });
let exitCode = 0;
for (let index = 0; index < options.turns; index++) {
  const execute =
    options.mode === "log" ? loggingExecute(index) : scriptedExecute(provider, taskFor("engineer", (options.firstRound ?? 1) + index));
  const result = await sessions.runTurn(
    { missionId: options.missionId, role: options.role, backend: { id: "scripted", resumable: true }, model: null, branch: "main", objectiveRevision: 1 },
    execute,
  );
  if (options.providerFile) writeFileSync(options.providerFile, provider.save());
  if (result.isErr()) {
    process.stdout.write(`${JSON.stringify({ error: result.error.code, message: result.error.message })}\n`);
    exitCode = 1;
    break;
  }
  const { plan, outcome, warnings } = result.value;
  process.stdout.write(`${JSON.stringify({ action: plan.action, reason: plan.reason, threadId: outcome.threadId, turn: plan.turn, warnings })}\n`);
}
await sessions.close();
await store.close();
process.exit(exitCode);
