#!/usr/bin/env node
// Fake `cursor-agent` for the adapter tests: replays recorded stream-json output (see ../../__fixtures__/fake-cli.mjs).
import { flagValue, runFakeCli } from "../../__fixtures__/fake-cli.mjs";

runFakeCli({
  version: "2026.11.20-a1b2c3d",
  fixture: new URL("./cursor.success.jsonl", import.meta.url),
  recordedId: "7d2c4b1a-0e9f-4a8b-8c7d-6e5f4a3b2c1d",
  parseArgs: (argv) => ({ resumeId: flagValue(argv, "--resume"), assignedId: null, prompt: argv.at(-1) }),
  hangAfterLines: 1,
  // Undocumented: modelled on the messages integrators match, stderr and a non-zero exit, no result line.
  badResume: (id) => ({ stderr: `Error: could not resume chat ${id}: chat not found`, exitCode: 1 }),
  inBandError: (id) => ({
    stdout: [
      JSON.stringify({ type: "system", subtype: "init", session_id: id, model: "GPT-5" }),
      JSON.stringify({ type: "result", subtype: "error", is_error: true, duration_ms: 10, result: "Model call failed: quota exceeded", session_id: id }),
    ],
  }),
  unknownEvents: (id) => [
    JSON.stringify({ type: "thinking", subtype: "delta", text: "hmm", session_id: id }),
    JSON.stringify({ type: "keel_future_event", session_id: id }),
  ],
});
