#!/usr/bin/env node
// Fake `qodercli` for the adapter tests: replays stream-json output in the observed shape (see ../../__fixtures__/fake-cli.mjs).
import { flagValue, runFakeCli } from "../../__fixtures__/fake-cli.mjs";

runFakeCli({
  version: "1.1.2",
  fixture: new URL("./qoder.success.jsonl", import.meta.url),
  recordedId: "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d",
  parseArgs: (argv) => ({ resumeId: flagValue(argv, "-r", "--resume"), assignedId: flagValue(argv, "--session-id"), prompt: argv.at(-1) }),
  hangAfterLines: 2,
  // Undocumented; modelled on Claude Code's engine, which Qoder mirrors.
  badResume: (id) => ({ stderr: `Error: No conversation found with session ID: ${id}`, exitCode: 1 }),
  inBandError: (id) => ({
    stdout: [
      JSON.stringify({ type: "system", subtype: "init", session_id: id, model: "auto" }),
      JSON.stringify({
        type: "result",
        subtype: "error_during_execution",
        is_error: true,
        session_id: id,
        error: { message: "Qoder quota exhausted" },
        error_code: "QUOTA",
        terminal_reason: "error",
      }),
    ],
  }),
  unknownEvents: (id) => [
    JSON.stringify({ type: "system", subtype: "session_state_changed", state: "running", session_id: id }),
    JSON.stringify({ type: "system", subtype: "task_progress", task_id: "t1", session_id: id }),
    JSON.stringify({ type: "stream_event", event: { type: "text_delta", text: "x" }, session_id: id }),
  ],
});
