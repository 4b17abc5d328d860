#!/usr/bin/env node
// Fake `copilot` for the adapter tests: replays recorded `--output-format json` output (see ../../__fixtures__/fake-cli.mjs).
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { flagValue, runFakeCli } from "../../__fixtures__/fake-cli.mjs";

// Copilot 1.0.102 keeps its token counts in $COPILOT_HOME/session-state/<id>/events.jsonl, one
// session.usage_record per model call; the fake writes one per turn (turn n: 1000n in, 100n of
// them cached, 10n out) when COPILOT_HOME is set.
function logSessionUsage(id, prompt) {
  const home = process.env.COPILOT_HOME;
  const scenario = process.env.KEEL_FAKE_SCENARIO ?? "success";
  if (!home || !id || (scenario !== "success" && scenario !== "unknown_events")) return;
  const dir = join(home, "session-state", id);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "events.jsonl");
  const turn = (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((line) => line.includes('"user.message"')).length : 0) + 1;
  const events = [
    { type: "user.message", data: { content: prompt } },
    { type: "assistant.message", data: { content: "…", usage: { inputTokens: 1, outputTokens: 1 } } },
    { type: "session.usage_record", data: { model: "fake-model", inputTokens: 1000 * turn, cacheReadTokens: 100 * turn, outputTokens: 10 * turn } },
  ];
  appendFileSync(file, `${events.map((event) => JSON.stringify(event)).join("\n")}\n`);
}

runFakeCli({
  version: "GitHub Copilot CLI 1.0.78.",
  fixture: new URL("./copilot.success.jsonl", import.meta.url),
  recordedId: "5b0e2a1c-9d8f-4e7a-b6c5-d4e3f2a1b0c9",
  parseArgs: (argv) => {
    const parsed = { resumeId: flagValue(argv, "--resume", "-r"), assignedId: flagValue(argv, "--session-id"), prompt: flagValue(argv, "-p", "--prompt") };
    logSessionUsage(parsed.resumeId ?? parsed.assignedId, parsed.prompt);
    return parsed;
  },
  hangAfterLines: 2,
  // github/copilot-cli#3377 (≥ 1.0.49): stderr, exit 1.
  badResume: (id) => ({
    stderr: `Error: No session, task, or name matched '${id}'.\n\nRun copilot --resume with no value to pick a session interactively.`,
    exitCode: 1,
  }),
  // A provider 500 that Copilot gave up on: its own message in a session.error event, exit 1.
  transientError: (id) => ({
    stdout: [
      JSON.stringify({ type: "session.error", data: { errorType: "model_call", message: "Model call failed: 500 Internal Server Error" }, id: "ev-1" }),
      JSON.stringify({ type: "result", timestamp: "2026-11-30T20:00:01Z", sessionId: id, exitCode: 1, usage: { premiumRequests: 0 } }),
    ],
    exitCode: 1,
  }),
  inBandError: (id) => ({
    stdout: [
      JSON.stringify({ type: "session.warning", data: { message: "Quota exhausted for this month" }, id: "ev-1", timestamp: "2026-11-30T20:00:00Z" }),
      JSON.stringify({ type: "result", timestamp: "2026-11-30T20:00:01Z", sessionId: id, exitCode: 1, usage: { premiumRequests: 0 } }),
    ],
  }),
  unknownEvents: () => [
    JSON.stringify({ type: "session.skills_loaded", data: { skills: [] }, id: "ev-x1", timestamp: "2026-11-30T20:00:00Z" }),
    JSON.stringify({ type: "session.usage_checkpoint", data: { totalPremiumRequests: 1, totalNanoAiu: 12 }, id: "ev-x2" }),
    JSON.stringify({ type: "keel.future_event", data: { nested: { deep: true } } }),
  ],
});
