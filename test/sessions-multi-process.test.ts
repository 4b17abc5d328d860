import { readFileSync } from "node:fs";
import path from "node:path";
import { createRoleSessions } from "@keel/sessions";
import { createFsStore } from "@keel/store-fs";
import { afterEach, describe, expect, it } from "vitest";
import { runWorker, temporaryDirectory } from "./support/sessions-fixture-dirs.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!();
});

function directory(prefix: string) {
  const made = temporaryDirectory(prefix);
  cleanups.push(made.remove);
  return made.dir;
}

async function capsuleOf(dir: string, role: string) {
  const store = createFsStore({ dir });
  try {
    return (await createRoleSessions({ store }).readCapsule("m1", role))._unsafeUnwrap();
  } finally {
    await store.close();
  }
}

describe("real processes on the filesystem store", () => {
  it("two processes running the same mission and role never interleave a turn", async () => {
    const dir = directory("lock");
    const log = path.join(dir, "turns.log");
    const worker = { dir, missionId: "m1", role: "engineer", turns: 4, policy: "rolling", mode: "log", log };
    const [a, b] = await Promise.all([runWorker(worker), runWorker(worker)]);
    expect([a.code, b.code], `${a.stderr}\n${b.stderr}`).toEqual([0, 0]);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(16);
    // Each start is followed by the end of the same process's turn: no two turns overlap.
    for (let index = 0; index < lines.length; index += 2) {
      const [startWord, startPid, startTurn] = lines[index]!.split(" ");
      const [endWord, endPid, endTurn] = lines[index + 1]!.split(" ");
      expect([startWord, endWord]).toEqual(["start", "end"]);
      expect(endPid).toBe(startPid);
      expect(endTurn).toBe(startTurn);
    }
    // Every turn planned from the previous one's saved capsule: turns 1 to 8, nothing lost.
    expect(lines.filter((line) => line.startsWith("start")).map((line) => Number(line.split(" ")[2]))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await capsuleOf(dir, "engineer"))?.counters.totalTurns).toBe(8);
    expect([...a.lines, ...b.lines].every((line) => line.warnings?.length === 0 || line.warnings?.every((warning) => (warning as { target: string }).target === "checkpoint"))).toBe(true);
  });

  it("processes running different roles of one mission run their turns at the same time", async () => {
    const dir = directory("parallel");
    const log = path.join(dir, "turns.log");
    const marker = (role: string) => path.join(dir, `${role}.started`);
    const base = { dir, missionId: "m1", turns: 1, policy: "rolling", mode: "log", log };
    // Each turn ends only after the other role's turn has started: serialized roles would never meet.
    const [engineer, reviewer] = await Promise.all([
      runWorker({ ...base, role: "engineer", rendezvous: { mine: marker("engineer"), other: marker("reviewer") } }),
      runWorker({ ...base, role: "reviewer", rendezvous: { mine: marker("reviewer"), other: marker("engineer") } }),
    ]);
    expect([engineer.code, reviewer.code], `${engineer.stderr}\n${reviewer.stderr}`).toEqual([0, 0]);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines.slice(0, 2).every((line) => line.startsWith("start"))).toBe(true);
  });

  it("a restarted process continues the rolling session where the last one left it", async () => {
    const dir = directory("restart");
    const providerFile = path.join(dir, "provider.json");
    const base = { dir, missionId: "m1", role: "engineer", policy: "rolling", mode: "scripted", providerFile };
    const first = await runWorker({ ...base, turns: 3, firstRound: 1 });
    expect(first.code, first.stderr).toBe(0);
    expect(first.lines.map((line) => line.action)).toEqual(["fresh", "resumed", "resumed"]);
    const before = await capsuleOf(dir, "engineer");
    const second = await runWorker({ ...base, turns: 4, firstRound: 4 });
    expect(second.code, second.stderr).toBe(0);
    // Same thread, counters going on: turns 4 to 6 resume, turn 7 rotates at the 6-turn limit.
    expect(second.lines.map((line) => `${line.turn}:${line.action}:${line.reason}`)).toEqual(["4:resumed:continuing", "5:resumed:continuing", "6:resumed:continuing", "7:rotated:max_turns"]);
    expect(second.lines[0]!.threadId).toBe(before?.thread.threadId);
    const after = await capsuleOf(dir, "engineer");
    expect(after?.counters).toMatchObject({ totalTurns: 7, rotations: 1, turnsSinceRotation: 1 });
  });
});
