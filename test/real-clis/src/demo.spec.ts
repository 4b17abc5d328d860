// `keel demo --backend pi --fake-provider`: the three-policy comparison with the real pi CLI,
// offline, its repeated reads from pi's own read tool calls (fileAccess).
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@keel/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliInstalled } from "./cli-sandbox.js";
import { demoCliIo } from "./demo-cli-io.js";

describe.skipIf(!cliInstalled("pi") && process.env.CI !== "true")("keel demo --backend pi --fake-provider", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "keel-demo-pi-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("runs the comparison with the real CLI, the repeated reads counted from its read tool calls", async () => {
    const { io, out: output, err } = demoCliIo("pi", root);
    const code = await runCli(["demo", "--backend", "pi", "--fake-provider", "--policies", "fresh,rolling", "--rounds", "2", "--dir", "demo"], io);
    const out = output();
    expect(err()).not.toMatch(/error/);
    expect(code).toBe(0);
    const dir = join(root, "demo");
    // A progress line per turn (2 policies × 2 rounds × 3 roles), then the comparison table.
    expect(out.split("\n").filter((line) => /^\[(fresh|rolling) *\] {2}round {2}\d {2}(planner|engineer|reviewer)/.test(line))).toHaveLength(12);
    expect(out).toMatch(/fresh/);
    expect(out).toMatch(/rolling/);
    expect(out).toMatch(/repeated/i);
    // Nothing the provider could not answer, nothing to an outside host.
    expect(JSON.parse(await readFile(join(dir, "cli", "provider-failures.json"), "utf8"))).toEqual([]);
    // The reads in the report are pi's read tool calls: the answers name no path (no `Inspected:`).
    const replies = (await readFile(join(dir, "cli", "provider-requests.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { reply: { text?: string; toolCalls?: { name: string; arguments: { path: string } }[] } | null });
    const readCalls = replies.flatMap((request) => request.reply?.toolCalls ?? []).filter((call) => call.name === "read");
    expect(readCalls.length).toBeGreaterThan(0);
    expect(replies.some((request) => request.reply?.text?.includes("Inspected:"))).toBe(false);
    const events = (await readFile(join(dir, "events.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; path?: string; missionId?: string; role?: string });
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
