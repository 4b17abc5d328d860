// examples/claude-agent-sdk-sessions over the REAL Claude Agent SDK (pinned in package.json),
// offline: the example's test lives here, where the SDK (~400 MiB with its Claude Code binary)
// is installed; the root `pnpm test` has no SDK to run it with.
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ClaudeAgentSdkModule } from "@keel/backends/claude-agent-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runClaudeSessions } from "../../../examples/claude-agent-sdk-sessions/claude-agent-sdk-sessions.js";

const SDK_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", "@anthropic-ai", "claude-agent-sdk");

describe.skipIf(!existsSync(join(SDK_DIR, "package.json")) && process.env.CI !== "true")("examples/claude-agent-sdk-sessions", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "keel-claude-example-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("keeps a Claude session per role, resumes one in a second process and rotates it from the capsule", async () => {
    const { query } = (await import(pathToFileURL(join(SDK_DIR, "sdk.mjs")).href)) as ClaudeAgentSdkModule;
    const run = await runClaudeSessions({ dir: root, query, path: [dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":") });
    expect(run.turns).toEqual(["planner fresh", "reviewer fresh", "planner resumed", "planner rotated"]);
    for (const id of run.threadIds) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // Each role its own session; the planner's resumed by id in the second process; a new one after the rotation.
    expect(run.threadIds[1]).not.toBe(run.threadIds[0]);
    expect(run.threadIds[2]).toBe(run.threadIds[0]);
    expect(run.threadIds[3]).not.toBe(run.threadIds[0]);
    expect(run.resumedCarriedHistory).toBe(true);
    expect(run.rotatedFromCapsule).toBe(true);
    // Claude Code's own Read tool call, as Keel's agent.io.read event.
    expect(run.reads).toEqual(["planner README.md"]);
  });
});
