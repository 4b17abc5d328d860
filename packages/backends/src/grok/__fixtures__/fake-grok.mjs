#!/usr/bin/env node
// Fake xAI `grok` for the adapter tests: replays recorded streaming-json output (see ../../__fixtures__/fake-cli.mjs).
import { flagValue, runFakeCli } from "../../__fixtures__/fake-cli.mjs";

runFakeCli({
  version: "grok 0.2.101",
  fixture: new URL("./grok.success.jsonl", import.meta.url),
  recordedId: "e5f6a7b8-c9d0-4e1f-a2b3-c4d5e6f7a8b9",
  parseArgs: (argv) => ({
    resumeId: flagValue(argv, "-r", "--resume"),
    assignedId: flagValue(argv, "-s", "--session-id"),
    prompt: flagValue(argv, "-p", "--single"),
  }),
  hangAfterLines: 2,
  // `-r` "errors if not found" (docs.x.ai); error shape {"type":"error","message":"Couldn't start session: …"}, exit 1.
  badResume: (id) => ({ stdout: [JSON.stringify({ type: "error", message: `Couldn't start session: session ${id} not found` })], exitCode: 1 }),
  inBandError: (id) => ({
    stdout: [
      JSON.stringify({ type: "text", data: "Editing" }),
      JSON.stringify({ type: "end", stopReason: "Cancelled", sessionId: id, usage: { input_tokens: 10, output_tokens: 1 }, num_turns: 1 }),
    ],
  }),
  unknownEvents: () => [
    JSON.stringify({ type: "available_commands", commands: ["/help"] }),
    JSON.stringify({ type: "plan", entries: [] }),
    JSON.stringify({ type: "auto_compact_start" }),
  ],
});
