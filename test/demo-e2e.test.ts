import { existsSync } from "node:fs";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KeelEvent, RoleSessionTurnEvent } from "@keel/core";
import { analyzeEvents, readEventsJsonl } from "@keel/telemetry";
import { describe, expect, it } from "vitest";
import { repoRoot, runKeel } from "./support/run-ts.js";

const turnsOf = (events: readonly KeelEvent[], missionId: string, role: string) =>
  events.filter((event): event is RoleSessionTurnEvent => event.type === "role.session.turn" && event.missionId === missionId && event.role === role);

describe("keel demo, end to end", () => {
  it("replays the mission under every policy, continues it after a restart, and inspects the result", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "keel-e2e-")), "demo");

    // 1. The demo's mission under all three policies, in a real process, on the fs store.
    const demo = await runKeel(["demo", "--dir", dir, "--rounds", "8"]);
    expect(demo.stderr).toBe("");
    expect(demo.code).toBe(0);
    expect(demo.stdout).toMatch(/\[rolling\]\s+round\s+7\s+reviewer\s+rotated \(max_turns\)/);
    expect(demo.stdout).toContain("Reviewer verdicts agree on 8 of 8 matched rounds.");
    // The table the README shows is the table the demo prints.
    const readme = await readFile(join(repoRoot, "README.md"), "utf8");
    const shown = readme.split("\n").filter((line) => /^(policy|fresh|mission|rolling) +(turns|\d+) /.test(line));
    expect(shown).toHaveLength(4);
    for (const line of shown) expect(demo.stdout).toContain(line);
    expect(existsSync(join(dir, "report.html"))).toBe(true);
    expect(existsSync(join(dir, "store", "missions", "demo-rolling", "role-sessions", "reviewer.json"))).toBe(true);

    const first = (await readEventsJsonl(join(dir, "events.jsonl")))._unsafeUnwrap().events as KeelEvent[];
    const analysis = analyzeEvents(first)._unsafeUnwrap();
    const policy = (name: string) => analysis.policies.find((entry) => entry.policy === name)!;
    expect(policy("rolling").reviewerPromptBytes).toBeLessThan(policy("fresh").reviewerPromptBytes);
    expect(policy("mission").reviewerPromptBytes).toBeLessThan(policy("fresh").reviewerPromptBytes);
    expect(policy("fresh").actions.resumed).toBe(0);
    expect(analysis.verdictAgreement.matchedRounds).toBe(8);
    expect(analysis.verdictAgreement.agreeingRounds).toBe(8);

    // 2. A restart: a new process continues the rolling mission on the same thread.
    const lastReviewer = turnsOf(first, "demo-rolling", "reviewer").at(-1)!;
    const capsuleBefore = JSON.parse(await readFile(join(dir, "store", "missions", "demo-rolling", "role-sessions", "reviewer.json"), "utf8"));
    expect(JSON.stringify(capsuleBefore)).toContain(lastReviewer.threadId!);
    const resumed = await runKeel(["demo", "--dir", dir, "--policies", "rolling", "--rounds", "1", "--continue"]);
    expect(resumed.stderr).toBe("");
    expect(resumed.code).toBe(0);
    const after = (await readEventsJsonl(join(dir, "events.jsonl")))._unsafeUnwrap().events as KeelEvent[];
    const continued = turnsOf(after, "demo-rolling", "reviewer").at(-1)!;
    expect(continued.turn).toBe(lastReviewer.turn + 1);
    expect(continued.action).toBe("resumed");
    expect(continued.threadId).toBe(lastReviewer.threadId);
    expect(resumed.stdout).toMatch(/\[rolling\]\s+round\s+9\s+reviewer\s+resumed/);

    // 3. keel inspect reads what the two processes left.
    const inspect = await runKeel(["inspect", join(dir, "store"), "--json"]);
    expect(inspect.stderr).toBe("");
    expect(inspect.code).toBe(0);
    const tree = JSON.stringify(JSON.parse(inspect.stdout));
    for (const mission of ["demo-fresh", "demo-mission", "demo-rolling"]) expect(tree).toContain(mission);
    expect(tree).toContain(continued.threadId!);
    const text = await runKeel(["inspect", join(dir, "store")]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("demo-rolling");
  });

  it("refuses bad arguments with exit code 2 and no stack trace", async () => {
    const dir = await mkdtemp(join(tmpdir(), "keel-e2e-bad-"));
    for (const args of [
      ["demo", "--rounds", "zero"],
      ["demo", "--policies", "sometimes"],
      ["demo", "--backend", "nonesuch"],
      ["demo", "--unknown-flag"],
      ["demo", "--dir", join(dir, "fresh"), "--continue"],
    ]) {
      const output = await runKeel(args);
      expect(output.code, args.join(" ")).toBe(2);
      expect(output.stderr).toMatch(/^error/);
      expect(output.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
