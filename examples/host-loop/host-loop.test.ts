import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRoleSessions } from "@keel/sessions";
import { createFsStore } from "@keel/store-fs";
import { expect, it } from "vitest";
import { runHostLoop } from "./host-loop.js";

it("runs rounds until the budget stops it, then leaves a handoff on disk", async () => {
  const dir = await mkdtemp(join(tmpdir(), "keel-host-loop-"));
  const run = await runHostLoop({ dir, rounds: 5, maxCalls: 7 });
  // 7 calls buy two whole rounds (3 calls each); the third round's reviewer is refused.
  expect(run).toEqual({ roundsCompleted: 2, stoppedBy: "budget_exceeded", verdicts: ["approve", "approve"] });
  const store = createFsStore({ dir });
  const sessions = createRoleSessions({ store });
  const handoff = (await sessions.readHandoff("release-1", "engineer"))._unsafeUnwrap();
  expect(handoff?.nextSteps).toEqual(["raise the mission budget, then continue"]);
  await sessions.close();
  await store.close();
});
