#!/usr/bin/env node
// Fake `claude` for the adapter tests: replays recorded stream-json output (see ../../__fixtures__/fake-cli.mjs).
import { randomUUID } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { flagValue, runFakeCli } from "../../__fixtures__/fake-cli.mjs";

const recordedId = "0c5a3e1e-7d7e-4a43-9b1e-3f0f8a7b9c21";

runFakeCli({
  version: "2.1.59 (Claude Code)",
  fixture: new URL("./claude-code.success.jsonl", import.meta.url),
  recordedId,
  parseArgs: (argv) => {
    const addDir = flagValue(argv, "--add-dir");
    const skillsDir = addDir && join(addDir, ".claude", "skills");
    const skills = skillsDir ? readdirSync(skillsDir).map((name) => ({ name, target: readlinkSync(join(skillsDir, name)) })) : [];
    return { resumeId: flagValue(argv, "--resume", "-r"), assignedId: flagValue(argv, "--session-id"), prompt: argv.at(-1), skills };
  },
  hangAfterLines: 1,
  // Claude reports a gone thread in-band, in a result event with a new session id (anthropics/claude-code#40609).
  badResume: (id) => ({
    stdout: [
      JSON.stringify({
        type: "result",
        subtype: "error_during_execution",
        duration_ms: 0,
        duration_api_ms: 0,
        is_error: true,
        num_turns: 0,
        session_id: randomUUID(),
        total_cost_usd: 0,
        usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
        permission_denials: [],
        errors: [`No conversation found with session ID: ${id}`],
      }),
    ],
    exitCode: 1,
  }),
  // After its own retries on 529 Overloaded, Claude Code ends with an error result and exit 1.
  transientError: (id) => ({
    stdout: [
      JSON.stringify({ type: "system", subtype: "init", session_id: id, model: "claude-sonnet-4-6" }),
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: true,
        duration_ms: 900,
        session_id: id,
        result: 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        usage: { input_tokens: 0, output_tokens: 0 },
      }),
    ],
    exitCode: 1,
  }),
  inBandError: (id) => ({
    stdout: [
      JSON.stringify({ type: "system", subtype: "init", session_id: id, model: "claude-sonnet-4-6" }),
      JSON.stringify({
        type: "result",
        subtype: "error_max_turns",
        is_error: true,
        duration_ms: 900,
        num_turns: 2,
        session_id: id,
        total_cost_usd: 0.001,
        usage: { input_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3 },
        errors: ["Reached maximum number of turns (2)"],
      }),
    ],
  }),
  unknownEvents: (id) => [
    JSON.stringify({ type: "rate_limit_event", rate_limit_info: { status: "allowed" }, session_id: id }),
    JSON.stringify({ type: "system", subtype: "compact_boundary", session_id: id }),
    JSON.stringify({ type: "keel_future_event", payload: { nested: [1, 2, 3] }, session_id: id }),
  ],
});
