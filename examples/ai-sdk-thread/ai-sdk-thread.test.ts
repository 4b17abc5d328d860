import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runAiSdkThread } from "./ai-sdk-thread.js";

it("keeps the AI SDK agent's thread across a restart, compacts it near the window and rotates it from the capsule", async () => {
  const run = await runAiSdkThread({ dir: await mkdtemp(join(tmpdir(), "keel-ai-sdk-thread-")) });
  expect(run.actions).toEqual(["fresh", "resumed", "resumed", "rotated"]);
  // One thread for the first three turns, across the restart; a new one after the rotation.
  expect(new Set(run.threadIds.slice(0, 3)).size).toBe(1);
  expect(run.threadIds[0]).toMatch(/^[0-9A-Z]{26}$/);
  expect(run.threadIds[3]).not.toBe(run.threadIds[0]);
  // The second process sent the first turn's tool result whole.
  expect(run.restartCarriedToolResult).toBe(true);
  // The third turn was compacted first: a summary call, then the turn with the summary in place of the old messages.
  expect(run.compaction.summaryCalls).toBeGreaterThanOrEqual(1);
  expect(run.compaction.summaryReachedTurn).toBe(true);
  expect(run.rotatedFromCapsule).toBe(true);
  // The agent's own tool call, reported as Keel's fileAccess.
  expect(run.reads).toEqual(["NOTES.md"]);
});
