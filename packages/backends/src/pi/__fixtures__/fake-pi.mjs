#!/usr/bin/env node
// Fake `pi` for the adapter tests: replays recorded `--mode json` output (see ../../__fixtures__/fake-cli.mjs).
import { flagValue, runFakeCli } from "../../__fixtures__/fake-cli.mjs";

const assistant = (fields) => ({
  role: "assistant",
  content: [],
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-sonnet-4-6",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp: 1796070000000,
  ...fields,
});

runFakeCli({
  version: "0.73.1",
  fixture: new URL("./pi.success.jsonl", import.meta.url),
  recordedId: "3f1c9a52-0d4e-4b7a-9c61-2e8f7a6b5d40",
  parseArgs: (argv) => ({
    resumeId: flagValue(argv, "--session"),
    assignedId: null,
    prompt: argv.at(-1),
    skills: argv.flatMap((arg, index) => (argv[index - 1] === "--skill" ? [arg] : [])),
  }),
  hangAfterLines: 1,
  // src/main.ts: stderr, exit 1.
  badResume: (id) => ({ stderr: `No session found matching '${id}'`, exitCode: 1 }),
  // pi --mode json exits 0 even when the model call failed (print-mode.ts).
  inBandError: (id) => {
    const failed = assistant({ stopReason: "error", errorMessage: "429 rate_limit_error: Number of request tokens has exceeded your limit" });
    return {
      stdout: [
        JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-11-30T20:00:00.000Z", cwd: process.cwd() }),
        JSON.stringify({ type: "agent_start" }),
        JSON.stringify({ type: "message_end", message: failed }),
        JSON.stringify({ type: "agent_end", messages: [failed] }),
      ],
    };
  },
  unknownEvents: () => [
    JSON.stringify({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 10, errorMessage: "overloaded" }),
    JSON.stringify({ type: "auto_compaction_start", reason: "threshold" }),
    JSON.stringify({ type: "keel_future_event", payload: [1, 2] }),
  ],
});
