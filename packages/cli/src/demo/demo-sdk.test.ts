// `keel demo --backend ai-sdk --fake-provider` and `--backend claude-agent-sdk`: the in-process
// SDK backends. The AI SDK runs here for real (@keel/ai-sdk over the real `ai` and
// @ai-sdk/openai-compatible, against the fake provider); the Claude Agent SDK is installed only
// in test/real-clis (its demo runs in src/claude-agent-sdk-demo.spec.ts there), so here only its
// absence is proven to be one typed line.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { runCli } from "@keel/cli";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureIo, REPO_ROOT, temporaryDirectory } from "../../../../test/support/cli-harness.js";
import { demoAiSdkTools } from "./demo-ai-sdk-tools.js";

/** A project with the AI SDK installed (@keel/ai-sdk's own, with `ai` and its providers): the demo finds the provider package there. */
const AI_SDK_PROJECT = path.join(REPO_ROOT, "packages/ai-sdk");

interface Recorded {
  reply: { text?: string; toolCalls?: { name: string; arguments: { path?: string } }[] } | null;
}

const lines = async <T>(file: string): Promise<T[]> =>
  (await readFile(file, "utf8"))
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);

describe("keel demo --backend ai-sdk --fake-provider", () => {
  let scratch: { dir: string; remove: () => void };
  beforeEach(() => {
    scratch = temporaryDirectory("demo-ai-sdk");
  });
  afterEach(() => scratch.remove());

  it("runs the three-policy comparison with the AI SDK's tool loop, the repeated reads from its real read tool calls", async () => {
    const dir = path.join(scratch.dir, "demo");
    const io = captureIo({ cwd: AI_SDK_PROJECT });
    const code = await runCli(["demo", "--backend", "ai-sdk", "--fake-provider", "--rounds", "2", "--dir", dir, "--heartbeat", "0"], io);
    expect(io.err).toBe("");
    expect(code).toBe(0);
    expect(io.out).toContain("on ai-sdk against the fake provider (offline)");
    // A progress line per turn (3 policies × 2 rounds × 3 roles), then the comparison table.
    expect(io.out.split("\n").filter((line) => /^\[(fresh|mission|rolling) *\] {2}round {2}\d {2}(planner|engineer|reviewer)/.test(line))).toHaveLength(18);
    expect(io.out).toContain("Reviewer verdicts agree on 2 of 2 matched rounds.");
    // Nothing the provider could not answer, nothing to an outside host.
    expect(JSON.parse(await readFile(path.join(dir, "cli", "provider-failures.json"), "utf8"))).toEqual([]);
    // The reads in the report are the model's read tool calls, run by the demo's tools: the answers name no path.
    const replies = await lines<Recorded>(path.join(dir, "cli", "provider-requests.jsonl"));
    const readCalls = replies.flatMap((request) => request.reply?.toolCalls ?? []).filter((call) => call.name === "read");
    expect(readCalls.length).toBeGreaterThan(0);
    expect(replies.some((request) => request.reply?.text?.includes("Inspected:"))).toBe(false);
    const events = await lines<{ type: string; path?: string; missionId?: string; role?: string; threadId?: string }>(path.join(dir, "events.jsonl"));
    const reads = events.filter((event) => event.type === "agent.io.read");
    expect(reads.length).toBe(readCalls.length);
    expect(reads.every((event) => existsSync(path.join(dir, "workspace", event.path!)))).toBe(true);
    const repeated = (policy: string) => {
      const seen = new Set<string>();
      let count = 0;
      for (const event of reads.filter((read) => read.missionId === `demo-${policy}`)) {
        const key = `${event.role}:${event.path}`;
        if (seen.has(key)) count++;
        seen.add(key);
      }
      return count;
    };
    // Under fresh every round re-reads; a resumed thread already holds its reads.
    expect(repeated("fresh")).toBeGreaterThan(0);
    expect(repeated("mission")).toBe(0);
    expect(repeated("rolling")).toBeLessThan(repeated("fresh"));
    // The table's figures are those of the events.
    const fresh = io.out.split("\n").find((line) => line.startsWith("fresh ") && / 6 /.test(line))!;
    expect(fresh.trim().split(/\s+/)[6]).toBe(String(repeated("fresh")));
    // A resumed thread is a transcript the AI SDK backend keeps in the demo's store.
    const resumed = events.find((event) => event.type === "role.session.turn" && (event as { action?: string }).action === "resumed");
    expect(resumed?.threadId).toBeTruthy();
    expect(existsSync(path.join(dir, "store", "transcripts"))).toBe(true);
  });

  it("without --fake-provider is a usage error that says what to add", async () => {
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["demo", "--backend", "ai-sdk", "--dir", "d"], io)).toBe(2);
    expect(io.err).toContain("--backend ai-sdk runs against the fake provider: add --fake-provider");
    expect(existsSync(path.join(scratch.dir, "d"))).toBe(false);
  });
});

describe("keel demo --backend claude-agent-sdk without the SDK installed", () => {
  let scratch: { dir: string; remove: () => void };
  beforeEach(() => {
    scratch = temporaryDirectory("demo-claude-sdk");
  });
  afterEach(() => scratch.remove());

  it("is one typed line naming the package to install, and writes nothing", async () => {
    for (const args of [["--fake-provider"], []]) {
      const io = captureIo({ cwd: scratch.dir });
      expect(await runCli(["demo", "--backend", "claude-agent-sdk", ...args, "--dir", "d"], io)).toBe(1);
      expect(io.err).toBe(
        "error (unavailable): the claude-agent-sdk backend needs @anthropic-ai/claude-agent-sdk, which is not installed: npm install @anthropic-ai/claude-agent-sdk (or pass its query as the `query` option)\n",
      );
      expect(io.out).toBe("");
      expect(existsSync(path.join(scratch.dir, "d"))).toBe(false);
    }
  });
});

describe("the ai-sdk demo's file tools", () => {
  let scratch: { dir: string; remove: () => void };
  beforeEach(() => {
    scratch = temporaryDirectory("demo-tools");
  });
  afterEach(() => scratch.remove());

  it("read, write and grep inside the repository, and refuse a path outside it with a reason", async () => {
    const tools = demoAiSdkTools(scratch.dir);
    expect(await tools.write.execute({ path: "src/a.ts", content: "export const a = 1;\n" })).toBe("wrote 20 bytes to src/a.ts");
    expect(await tools.read.execute({ path: path.join(scratch.dir, "src/a.ts") })).toBe("export const a = 1;\n");
    expect(await tools.grep.execute({ pattern: "const a" })).toBe("src/a.ts:1: export const a = 1;");
    expect(await tools.grep.execute({ pattern: "nothing here", path: "src" })).toBe("no matches");
    expect(await tools.read.execute({ path: "../outside.txt" })).toBe("error: ../outside.txt is outside the repository");
    expect(await tools.write.execute({ path: "/etc/x", content: "" })).toBe("error: /etc/x is outside the repository");
    expect(await tools.read.execute({ path: "missing.txt" })).toBe("error: cannot read missing.txt: ENOENT");
    expect(await tools.grep.execute({ pattern: "(" })).toBe("error: ( is not a regular expression");
  });
});
