#!/usr/bin/env node
// Fake `gemini` for the adapter tests: replays recorded stream-json output (see ../../__fixtures__/fake-cli.mjs).
import { flagValue, runFakeCli } from "../../__fixtures__/fake-cli.mjs";

runFakeCli({
  version: "0.20.1",
  fixture: new URL("./gemini.success.jsonl", import.meta.url),
  recordedId: "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
  parseArgs: (argv) => ({ resumeId: flagValue(argv, "--resume", "-r"), assignedId: flagValue(argv, "--session-id"), prompt: flagValue(argv, "-p", "--prompt") }),
  hangAfterLines: 1,
  // packages/cli/src/gemini.tsx: stderr, exit 42 (input error).
  badResume: (id) => ({
    stderr: `Error resuming session: Invalid session identifier "${id}".\n  Searched for sessions in ${process.cwd()}/.gemini/tmp/chats.\n  Use --list-sessions to see available sessions, then use --resume {number}, --resume {uuid}, or --resume latest.`,
    exitCode: 42,
  }),
  inBandError: (id) => ({
    stdout: [
      JSON.stringify({ type: "init", timestamp: "2026-11-30T20:00:00Z", session_id: id, model: "gemini-2.5-pro" }),
      JSON.stringify({ type: "error", severity: "error", message: "[API Error: 429 Resource exhausted]", timestamp: "2026-11-30T20:00:01Z" }),
      JSON.stringify({
        type: "result",
        status: "error",
        error: { type: "FatalTurnError", message: "[API Error: 429 Resource exhausted]" },
        stats: { total_tokens: 0, input_tokens: 0, output_tokens: 0, duration_ms: 900, tool_calls: 0 },
        timestamp: "2026-11-30T20:00:01Z",
      }),
    ],
  }),
  unknownEvents: () => [
    JSON.stringify({ type: "error", severity: "warning", message: "Loop detection triggered a pause", timestamp: "2026-11-30T20:00:00Z" }),
    JSON.stringify({ type: "keel_future_event", timestamp: "2026-11-30T20:00:00Z" }),
  ],
});
