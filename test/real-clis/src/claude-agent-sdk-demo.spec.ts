// `keel demo --backend claude-agent-sdk --fake-provider`: the three-policy comparison over the
// REAL Claude Agent SDK (pinned in package.json), offline, its repeated reads from the Read tool
// calls of the SDK's own Claude Code. The demo finds the SDK in the project it runs in: this
// folder, whose node_modules holds it (the SDK is no dependency of the workspace).
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliIo } from "@keel/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
const SDK_INSTALLED = existsSync(join(PACKAGE_DIR, "node_modules", "@anthropic-ai", "claude-agent-sdk", "package.json"));

const lines = async <T>(file: string): Promise<T[]> =>
  (await readFile(file, "utf8"))
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);

describe.skipIf(!SDK_INSTALLED && process.env.CI !== "true")("keel demo --backend claude-agent-sdk --fake-provider", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "keel-demo-claude-sdk-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("runs the comparison with the real SDK, the repeated reads counted from its Read tool calls", async () => {
    let out = "";
    let err = "";
    const io: CliIo = {
      stdout: (text) => void (out += text),
      stderr: (text) => void (err += text),
      color: false,
      cwd: PACKAGE_DIR,
      env: { PATH: [dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":") },
    };
    const dir = join(root, "demo");
    const code = await runCli(["demo", "--backend", "claude-agent-sdk", "--fake-provider", "--policies", "fresh,rolling", "--rounds", "2", "--dir", dir, "--heartbeat", "0"], io);
    expect(err).not.toMatch(/error/);
    expect(code).toBe(0);
    expect(out).toContain("on claude-agent-sdk against the fake provider (offline)");
    // A progress line per turn (2 policies × 2 rounds × 3 roles), thread ids the SDK's session ids.
    const turns = out.split("\n").filter((line) => /^\[(fresh|rolling) *\] {2}round {2}\d {2}(planner|engineer|reviewer)/.test(line));
    expect(turns).toHaveLength(12);
    expect(turns.every((line) => /thread [0-9a-f-]{36}$/.test(line))).toBe(true);
    expect(out).toContain("Reviewer verdicts agree on 2 of 2 matched rounds.");
    // Nothing the provider could not answer, nothing to an outside host.
    expect(JSON.parse(await readFile(join(dir, "cli", "provider-failures.json"), "utf8"))).toEqual([]);
    // The reads in the report are Claude Code's Read tool calls: the answers name no path.
    const replies = await lines<{ reply: { text?: string; toolCalls?: { name: string }[] } | null }>(join(dir, "cli", "provider-requests.jsonl"));
    const readCalls = replies.flatMap((request) => request.reply?.toolCalls ?? []).filter((call) => call.name === "Read");
    expect(readCalls.length).toBeGreaterThan(0);
    expect(replies.some((request) => request.reply?.text?.includes("Inspected:"))).toBe(false);
    const events = await lines<{ type: string; path?: string; missionId?: string; role?: string }>(join(dir, "events.jsonl"));
    const reads = events.filter((event) => event.type === "agent.io.read");
    expect(reads.length).toBe(readCalls.length);
    expect(reads.every((event) => existsSync(join(dir, "workspace", event.path!)))).toBe(true);
    // Under fresh every round re-reads; a resumed rolling thread does not.
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
    expect(repeated("fresh")).toBeGreaterThan(0);
    expect(repeated("rolling")).toBeLessThan(repeated("fresh"));
  });
});
