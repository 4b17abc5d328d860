import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Backend, BackendTurnRequest } from "@keel/backend";
import { createEventBus, emptyUsage, newId, type KeelEvent } from "@keel/core";
import { createKeel } from "@keel/runtime";
import { createMemoryStore } from "@keel/store";
import { okAsync } from "neverthrow";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** A backend whose turns report tool calls and keep a resume state, as the Codex adapter does. */
function createToolBackend(cwd: string): Backend & { requests: BackendTurnRequest[] } {
  const requests: BackendTurnRequest[] = [];
  return {
    id: "tools",
    capabilities: { resume: true, skills: "prompt", usage: "full" },
    requests,
    runTurn(request) {
      requests.push(request);
      const turn = requests.length;
      return okAsync({
        text: "done\nInspected: never-read-by-a-tool.md",
        threadId: request.threadId ?? newId(),
        usage: { ...emptyUsage(), inputUncached: 10, output: 1 },
        durationMs: 1,
        exitCode: 0,
        fileAccess: [
          { op: "read", path: join(cwd, "src", "a.ts"), tool: "Read" },
          { op: "write", path: "out.txt", bytes: 5, tool: "Write" },
          { op: "search", path: "src", tool: "Grep" },
          { op: "read", path: "/etc/outside.conf", tool: "Read" },
        ],
        toolCalls: 5,
        resumeState: { runningTotal: turn },
      });
    },
  };
}

describe("runRoleTurn: agent.io.* from the backend's tool calls, resume state kept with the thread", () => {
  let cwd: string;
  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), "keel-io-"));
    await mkdir(join(cwd, "src"));
    await writeFile(join(cwd, "src", "a.ts"), "export const a = 1;\n");
  });
  afterEach(() => rm(cwd, { recursive: true, force: true }));

  it("emits read, write and search with role, mission, the path relative to cwd and bytes, and returns the tool calls", async () => {
    const events = createEventBus();
    const seen: KeelEvent[] = [];
    events.on("*", (event) => seen.push(event));
    const keel = createKeel({ store: createMemoryStore(), backends: [createToolBackend(cwd)], cwd, events, policy: "rolling" });
    const result = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Go.", objective: "O" }))._unsafeUnwrap();
    expect(result.toolCalls).toBe(5);
    expect(result.fileAccess).toHaveLength(4);
    const io = seen
      .filter((event) => event.type.startsWith("agent.io."))
      .map((event) => {
        const { at: _at, ...rest } = event as KeelEvent & { at: number };
        return rest;
      });
    expect(io).toEqual([
      { type: "agent.io.read", role: "engineer", missionId: "m1", path: "src/a.ts", bytes: Buffer.byteLength("export const a = 1;\n"), skill: null },
      { type: "agent.io.write", role: "engineer", missionId: "m1", path: "out.txt", bytes: 5, skill: null },
      { type: "agent.io.search", role: "engineer", missionId: "m1", path: "src", bytes: 0, skill: null },
      { type: "agent.io.read", role: "engineer", missionId: "m1", path: "/etc/outside.conf", bytes: 0, skill: null },
    ]);
    await keel.close();
  });

  it("passes the resume state the thread's last turn returned back on the next resume, and none on a fresh turn", async () => {
    const backend = createToolBackend(cwd);
    const store = createMemoryStore();
    const keel = createKeel({ store, backends: [backend], cwd, policy: "rolling" });
    const first = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "One.", objective: "O" }))._unsafeUnwrap();
    await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Two.", objective: "O" });
    await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Three.", objective: "O" });
    expect(backend.requests.map((request) => request.resumeState)).toEqual([undefined, { runningTotal: 1 }, { runningTotal: 2 }]);
    expect(backend.requests[1]!.threadId).toBe(first.threadId);
    // Another process over the same store resumes with the same state: it is stored, not held in memory.
    const again = createKeel({ store, backends: [backend], cwd, policy: "rolling" });
    await again.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Four.", objective: "O" });
    expect(backend.requests[3]!.resumeState).toEqual({ runningTotal: 3 });
    await keel.close();
    await again.close();
  });
});
