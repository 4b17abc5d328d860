#!/usr/bin/env node
// Fake `copilot` for the adapter tests: replays recorded `--output-format json` output (see ../../__fixtures__/fake-cli.mjs).
import { flagValue, runFakeCli } from "../../__fixtures__/fake-cli.mjs";

runFakeCli({
  version: "GitHub Copilot CLI 1.0.78.",
  fixture: new URL("./copilot.success.jsonl", import.meta.url),
  recordedId: "5b0e2a1c-9d8f-4e7a-b6c5-d4e3f2a1b0c9",
  parseArgs: (argv) => ({ resumeId: flagValue(argv, "--resume", "-r"), assignedId: flagValue(argv, "--session-id"), prompt: flagValue(argv, "-p", "--prompt") }),
  hangAfterLines: 2,
  // github/copilot-cli#3377 (≥ 1.0.49): stderr, exit 1.
  badResume: (id) => ({
    stderr: `Error: No session, task, or name matched '${id}'.\n\nRun copilot --resume with no value to pick a session interactively.`,
    exitCode: 1,
  }),
  inBandError: (id) => ({
    stdout: [
      JSON.stringify({ type: "session.warning", data: { message: "Rate limit reached" }, id: "ev-1", timestamp: "2026-11-30T20:00:00Z" }),
      JSON.stringify({ type: "result", timestamp: "2026-11-30T20:00:01Z", sessionId: id, exitCode: 1, usage: { premiumRequests: 0 } }),
    ],
  }),
  unknownEvents: () => [
    JSON.stringify({ type: "session.skills_loaded", data: { skills: [] }, id: "ev-x1", timestamp: "2026-11-30T20:00:00Z" }),
    JSON.stringify({ type: "session.usage_checkpoint", data: { totalPremiumRequests: 1, totalNanoAiu: 12 }, id: "ev-x2" }),
    JSON.stringify({ type: "keel.future_event", data: { nested: { deep: true } } }),
  ],
});
