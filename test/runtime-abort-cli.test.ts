// runRoleTurn's AbortSignal and onProgress against a real spawned CLI (a fake Claude Code that
// speaks stream-json): the progress events come from its stdout as it writes them, and an abort
// kills its whole process group, grandchild included, and settles the reservation.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEventBus, type KeelEvent } from "@keel/core";
import { createClaudeCodeBackend } from "@keel/backends/claude-code";
import { createKeel, type RoleTurnProgress } from "@keel/runtime";
import { createMemoryStore } from "@keel/store";
import { waitForProcessesToExit } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";

// Prints the session and one Read tool call, records its pid and a grandchild's (a tool
// subprocess sharing stdout), then either finishes (FAKE_MODE=finish) or hangs until killed.
const FAKE_CLAUDE = `
const { spawn } = require("node:child_process");
const { appendFileSync } = require("node:fs");
const say = (event) => process.stdout.write(JSON.stringify(event) + "\\n");
say({ type: "system", subtype: "init", session_id: "s-1" });
say({ type: "assistant", session_id: "s-1", message: { content: [{ type: "tool_use", id: "call-1", name: "Read", input: { file_path: "src/a.ts" } }] } });
if (process.env.FAKE_MODE === "finish") {
  say({ type: "result", subtype: "success", is_error: false, session_id: "s-1", result: "Decision: read it", usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
} else {
  const grandchild = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: ["ignore", "inherit", "inherit"] });
  appendFileSync(process.env.FAKE_PIDS, JSON.stringify([process.pid, grandchild.pid]) + "\\n");
  setInterval(() => {}, 1000);
}
`;

let root: string | undefined;
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

async function setup(mode: "hang" | "finish") {
  root = await mkdtemp(join(tmpdir(), "keel-runtime-abort-"));
  const cwd = join(root, "work");
  await mkdir(cwd);
  const script = join(root, "fake-claude.cjs");
  await writeFile(script, FAKE_CLAUDE);
  const pids = join(root, "pids.jsonl");
  const backend = createClaudeCodeBackend({ command: process.execPath, commandArgs: [script], env: { FAKE_MODE: mode, FAKE_PIDS: pids }, killGraceMs: 300 });
  const events = createEventBus();
  const seen: KeelEvent[] = [];
  events.on("*", (event) => seen.push(event));
  const keel = createKeel({ store: createMemoryStore(), backends: [backend], cwd, events });
  return { keel, seen, pids };
}

async function abortOnceRecorded(pids: string, controller: AbortController): Promise<void> {
  while (!(await readFile(pids, "utf8").catch(() => "")).endsWith("\n")) await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort();
}

const input = { missionId: "m1", role: "engineer", prompt: "Read src/a.ts.", objective: "Know the code" };

describe("runRoleTurn over a spawned CLI", () => {
  it("an abort while the CLI runs kills its process group and answers aborted", async () => {
    const { keel, seen, pids } = await setup("hang");
    const controller = new AbortController();
    const progress: RoleTurnProgress[] = [];
    const result = await keel.runRoleTurn(input, {
      signal: controller.signal,
      onProgress: (event) => {
        progress.push(event);
        // The tool call is on stdout: the CLI is running. Abort once its pids are recorded.
        if (event.type === "file_access") void abortOnceRecorded(pids, controller);
      },
    });
    expect(result._unsafeUnwrapErr().code).toBe("aborted");
    expect(progress.map((event) => event.type)).toEqual(["tool_call", "file_access"]);
    expect(progress[1]).toMatchObject({ type: "file_access", access: { op: "read", path: "src/a.ts", tool: "Read" }, role: "engineer", backend: "claude-code" });
    const spawned = (await readFile(pids, "utf8")).trim().split("\n").flatMap((line) => JSON.parse(line) as number[]);
    expect(spawned).toHaveLength(2);
    expect(await waitForProcessesToExit(spawned)).toEqual([]);
    const settled = seen.find((event) => event.type === "budget.settled");
    expect(settled?.type === "budget.settled" && settled.details?.outcome).toBe("settled");
    await keel.close();
  });

  it("a finished turn reports its progress and returns the same result", async () => {
    const { keel } = await setup("finish");
    const progress: RoleTurnProgress[] = [];
    const result = (await keel.runRoleTurn(input, { onProgress: (event) => progress.push(event) }))._unsafeUnwrap();
    expect(progress.map((event) => event.type)).toEqual(["tool_call", "file_access", "text"]);
    expect(progress[2]).toMatchObject({ type: "text", text: "Decision: read it" });
    expect(result.text).toBe("Decision: read it");
    expect(result.toolCalls).toBe(1);
    expect(result.fileAccess).toEqual([{ op: "read", path: "src/a.ts", tool: "Read" }]);
    await keel.close();
  });
});
