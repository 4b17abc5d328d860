#!/usr/bin/env node
// Fake `codex` for the adapter tests: replays recorded `exec --json` output (see ../../__fixtures__/fake-cli.mjs).
import { runFakeCli } from "../../__fixtures__/fake-cli.mjs";

runFakeCli({
  version: "codex-cli 0.130.0",
  fixture: new URL("./codex.success.jsonl", import.meta.url),
  // A resumed turn reports the thread's running total (turn 1 + this turn).
  resumeFixture: new URL("./codex.resumed.jsonl", import.meta.url),
  recordedId: "0199b7aa-1c2d-7e3f-8a4b-5c6d7e8f9a0b",
  parseArgs: (argv) => {
    const resume = argv.indexOf("resume");
    return { resumeId: resume === -1 ? null : argv[resume + 1], assignedId: null, prompt: argv.at(-1) };
  },
  hangAfterLines: 2,
  // codex-cli 0.130 (RunMaestro/Maestro#1043): nothing on stdout, exit 1.
  badResume: (id) => ({
    stderr: `Error: thread/resume: thread/resume failed: no rollout found for thread id ${id} (code -32600)`,
    exitCode: 1,
  }),
  inBandError: (id) => ({
    stdout: [
      JSON.stringify({ type: "thread.started", thread_id: id }),
      JSON.stringify({ type: "turn.started" }),
      JSON.stringify({ type: "error", message: "stream disconnected before completion: rate limit reached" }),
      JSON.stringify({ type: "turn.failed", error: { message: "stream disconnected before completion: rate limit reached" } }),
    ],
  }),
  // A provider 503 after Codex's own retries (request_max_retries = 0 in the real-CLI setup).
  transientError: (id) => ({
    stdout: [
      JSON.stringify({ type: "thread.started", thread_id: id }),
      JSON.stringify({ type: "turn.started" }),
      JSON.stringify({ type: "error", message: "unexpected status 503 Service Unavailable: upstream overloaded" }),
      JSON.stringify({ type: "turn.failed", error: { message: "unexpected status 503 Service Unavailable: upstream overloaded" } }),
    ],
    exitCode: 1,
  }),
  unknownEvents: () => [
    JSON.stringify({ type: "item.plan.delta", delta: "1. read README" }),
    JSON.stringify({ type: "item.completed", item: { id: "item_9", type: "error", message: "Skill descriptions were shortened to fit the budget" } }),
    JSON.stringify({ type: "item.updated", item: { id: "item_10", type: "todo_list", items: [] } }),
    JSON.stringify({ type: "keel.future_event", payload: { nested: true } }),
  ],
});
