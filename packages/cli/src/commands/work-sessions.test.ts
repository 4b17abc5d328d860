import path from "node:path";
import { createEventBus, createManualClock, newId, type Usage } from "@keel/core";
import type { Backend, BackendTurnResult } from "@keel/backend";
import { runCli } from "@keel/cli";
import { createKeel } from "@keel/runtime";
import { createFsStore } from "@keel/store-fs";
import { createJsonlEventSink } from "@keel/telemetry";
import { okAsync } from "neverthrow";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoreInspection } from "../internal/inspect-model.js";
import { captureIo, temporaryDirectory } from "../../../../test/support/cli-harness.js";

let scratch: { dir: string; remove: () => void };
beforeEach(() => {
  scratch = temporaryDirectory("work-sessions");
});
afterEach(() => scratch.remove());

const unknown: Usage = { inputUncached: null, cacheRead: null, cacheWrite: null, output: null, reasoning: null, costUsd: null };

/** A backend whose turns take 6 minutes, make 4 tool calls, and report usage only when `withUsage` says so. */
function backend(clock: ReturnType<typeof createManualClock>, withUsage: () => boolean): Backend {
  return {
    id: "tools",
    capabilities: { resume: true, skills: "prompt", usage: "full" },
    runTurn: (request) => {
      clock.advance(6 * 60_000);
      const usage = withUsage() ? { inputUncached: 200, cacheRead: 0, cacheWrite: 0, output: 50, reasoning: null, costUsd: null } : unknown;
      const result: BackendTurnResult = { text: "Decision: done", threadId: request.threadId ?? newId(), usage, durationMs: 1, exitCode: 0, fileAccess: [], toolCalls: 4 };
      return okAsync(result);
    },
  };
}

/**
 * Writes, through the real runtime and the JSONL sink, a store and an events file with: a turn
 * outside any session, a closed session whose turns reported no usage, a closed session with no
 * turn (a true 0), and an open session with usage; then a mission with no session at all.
 */
async function writeMission(dir: string): Promise<{ storeDir: string; eventsFile: string }> {
  const storeDir = path.join(dir, "store");
  const eventsFile = path.join(dir, "events.jsonl");
  const clock = createManualClock();
  const events = createEventBus({ clock });
  const sink = createJsonlEventSink({ file: eventsFile });
  const detach = sink.attach(events);
  let usage = false;
  const keel = createKeel({ store: createFsStore({ dir: storeDir }), backends: [backend(clock, () => usage)], events, clock });
  const turn = (missionId = "m1") => keel.runRoleTurn({ missionId, role: "engineer", prompt: "Work.", model: "opus", budget: { tokens: 1_000_000 } });
  (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Before.", model: "opus" }))._unsafeUnwrap();
  (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
  (await turn())._unsafeUnwrap();
  (await turn())._unsafeUnwrap();
  (await keel.closeWorkSession({ missionId: "m1" }))._unsafeUnwrap();
  (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
  (await keel.closeWorkSession({ missionId: "m1" }))._unsafeUnwrap();
  usage = true;
  (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
  (await turn())._unsafeUnwrap();
  (await keel.runRoleTurn({ missionId: "m2", role: "engineer", prompt: "Elsewhere.", model: "opus" }))._unsafeUnwrap();
  await keel.close();
  await keel.store.close();
  (await sink.flush())._unsafeUnwrap();
  detach();
  (await sink.close())._unsafeUnwrap();
  return { storeDir, eventsFile };
}

describe("keel report and keel inspect show work sessions", () => {
  it("report: a row per session over its own window, 'no data' apart from 0, this session, outside turns and the token window", async () => {
    const { eventsFile } = await writeMission(scratch.dir);
    const io = captureIo();
    expect(await runCli(["report", eventsFile], io)).toBe(0);
    const text = io.out;
    expect(text).toContain("Work sessions:");
    const rows = text.split("\n").filter((line) => /^ {2}\S+ +m1 +\(mission\) +opus /.test(line));
    expect(rows).toHaveLength(3);
    // Two turns, no usage reported: tokens are "no data", tool calls 8, 0.2 hours.
    expect(rows[0]).toMatch(/closed +2 +0 +0\.2 +no data +8 +0$/);
    // No turn at all: a true 0.
    expect(rows[1]).toMatch(/closed +0 +0 +0 +0 +0 +0$/);
    // Open: its window runs to the last event of the log (the later turn of m2).
    expect(rows[2]).toMatch(/open +1 +0 +0\.2 +250 +4 +0$/);
    expect(text).toMatch(/this session: \S+, 1 turns, tokens 250/);
    expect(text).toContain("outside any session: 2 turns, tokens 250 (1 turn without usage)");
    expect(text).toContain("token window (last 3 of 5 sessions): tokens 250");
    expect(text).toContain("audits due: none");
    expect(io.err).toBe("");
  });

  it("inspect: open and closed sessions with their counters, 'no data' apart from 0, the audit cadence, and none for a mission without sessions", async () => {
    const { storeDir } = await writeMission(scratch.dir);
    const io = captureIo();
    expect(await runCli(["inspect", storeDir], io)).toBe(0);
    const text = io.out;
    expect(text).toMatch(/work sessions v\d+ missions\/m1\/work-sessions/);
    expect(text).toMatch(/work session \S+ open since .*mission-wide, model opus: 1 turn, 0 tasks, tokens 250, tool calls 4, 6 active minutes, checkpoint counter 4, 0 model mismatches/);
    expect(text).toMatch(/work session \S+ closed .*: 2 turns, 0 tasks, tokens no data \(2 turns without usage\), tool calls 8, 12 active minutes/);
    expect(text).toMatch(/work session \S+ closed .*: 0 turns, 0 tasks, tokens 0, tool calls 0/);
    expect(text).toContain("2 closed sessions, no audit due (2 of 3 sessions closed since the last)");
    expect(text).toMatch(/mission m2\n.*checkpoint v1: placeholder .*\n.*work sessions: none \(no work session was ever opened: no figures\)/);
    const json = io.out;
    const again = captureIo();
    expect(await runCli(["inspect", storeDir, "--json"], again)).toBe(0);
    const inspection = JSON.parse(again.out) as StoreInspection;
    const m1 = inspection.missions.find((mission) => mission.id === "m1")!;
    expect(m1.workSessions).toMatchObject({ status: "ok", value: { closedCount: 2, open: [{ turns: 1, tokens: 250 }], closed: [{ tokens: null }, { tokens: 0 }] } });
    expect(inspection.missions.find((mission) => mission.id === "m2")!.workSessions).toBeNull();
    expect(json).not.toBe("");
  });
});
