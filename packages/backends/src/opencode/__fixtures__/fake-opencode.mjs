#!/usr/bin/env node
// Fake `opencode` for the adapter tests: replays recorded `run --format json` output (see ../../__fixtures__/fake-cli.mjs).
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { flagValue, runFakeCli } from "../../__fixtures__/fake-cli.mjs";

function stagedSkills() {
  const config = process.env.OPENCODE_CONFIG_CONTENT ? JSON.parse(process.env.OPENCODE_CONFIG_CONTENT) : {};
  return (config.skills?.paths ?? []).map((path) => {
    try {
      return { path, skills: readdirSync(path).map((name) => ({ name, target: readlinkSync(join(path, name)) })) };
    } catch {
      return { path, skills: null };
    }
  });
}

runFakeCli({
  version: "1.14.25",
  fixture: new URL("./opencode.success.jsonl", import.meta.url),
  recordedId: "ses_2a0b1c2d3e4fKeelFixture01",
  newId: () => `ses_${randomBytes(12).toString("hex")}`,
  // The prompt comes on stdin (the adapter's way: a positional prompt with spaces arrives JSON-quoted).
  parseArgs: (argv) => ({
    resumeId: flagValue(argv, "-s", "--session"),
    assignedId: null,
    prompt: readFileSync(0, "utf8"),
    title: flagValue(argv, "--title"),
    staged: stagedSkills(),
  }),
  hangAfterLines: 1,
  // anomalyco/opencode#27559: nothing on stdout, the error on stderr, exit 0.
  badResume: (id) => ({
    stderr: `NotFoundError: Resource not found\n    at Session.get (src/session/index.ts:212)\n data: { message: "Session not found: ${id}" }`,
    exitCode: 0,
  }),
  // Logical errors exit 0 (#14551).
  inBandError: (id) => ({
    stdout: [
      JSON.stringify({
        type: "error",
        timestamp: 1777197598202,
        sessionID: id,
        error: { name: "UnknownError", data: { message: "Model not found: nonexistent/nonexistent." } },
      }),
    ],
  }),
  unknownEvents: (id) => [
    JSON.stringify({ type: "reasoning", timestamp: 1, sessionID: id, part: { type: "reasoning", text: "thinking" } }),
    JSON.stringify({ type: "keel_future_event", timestamp: 2, sessionID: id, part: { type: "future" } }),
  ],
});
