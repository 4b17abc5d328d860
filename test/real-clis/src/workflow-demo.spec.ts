// `keel demo --workflow review_change --backend pi --fake-provider`: the built-in review workflow
// end to end on the fs store with the real pi CLI running every stage, offline; the demo acts as
// the supervisor (revising once, then accepting).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@keel/cli";
import { createFsStore } from "@keel/store-fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliInstalled } from "./cli-sandbox.js";
import { demoCliIo } from "./demo-cli-io.js";

const FIRST = "the last index is fixed; the empty list is not handled";
const REVISED = "the empty list is handled; approve";

describe.skipIf(!cliInstalled("pi") && process.env.CI !== "true")("keel demo --workflow review_change --backend pi --fake-provider", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "keel-workflow-demo-pi-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("runs every stage on the real CLI, revises once, accepts, and prints each stage, status, attempts and budget", async () => {
    const { io, out: output, err } = demoCliIo("pi", root);
    const code = await runCli(["demo", "--workflow", "review_change", "--backend", "pi", "--fake-provider", "--dir", "demo"], io);
    const out = output();
    expect(err()).toBe("");
    expect(code).toBe(0);
    const lines = out.split("\n");
    expect(lines[0]).toMatch(/^keel demo: workflow review_change on pi against the fake provider \(offline\), in /);

    // Each local stage, twice (before and after the revision): completed on its first attempt, live.
    const stages = lines.map((line) => /^ {2}stage (\S+) +(\S+) +completed {2}attempt (\d) on (\S+) \((live|journal)\)$/.exec(line)).filter((match) => match !== null);
    expect(stages.map((match) => [match[1], match[2], match[3], match[5]])).toEqual(
      [0, 1].flatMap(() => [
        ["explore", "explore", "1", "live"],
        ["review", "diff_review", "1", "live"],
        ["security_review", "security_review", "1", "live"],
      ]),
    );
    // High risk, medium size: the resource review is skipped, at no cost, each cycle.
    expect(lines.filter((line) => /^ {2}stage resource_review +skipped \(condition\)$/.test(line))).toHaveLength(2);

    // The demo as supervisor at the final checkpoint: revise, then accept.
    expect(lines.filter((line) => line.includes("supervisor at checkpoint")).map((line) => line.trim())).toEqual(['supervisor at checkpoint "decide": revise', 'supervisor at checkpoint "decide": accept']);

    // The status after every step and decision: state, stage, version, attempts, corrections and budget.
    const statuses = lines
      .map((line) => /^ {2}→ (\S+) at (\S+) · version (\d+) · attempts (\d+) · corrections (\d)\/2 · calls (\d+)\/40, tokens (\d+), time (\d+) ms$/.exec(line))
      .filter((match) => match !== null);
    expect(statuses.map((match) => match.slice(1, 7))).toEqual([
      ["awaiting_checkpoint", "decide", "2", "3", "0", "3"],
      ["ready", "explore", "3", "0", "1", "3"],
      ["awaiting_checkpoint", "decide", "4", "3", "1", "6"],
      ["completed", "decide", "5", "3", "1", "6"],
    ]);
    const tokens = statuses.map((match) => Number(match[7]));
    expect(tokens[0]).toBeGreaterThan(0);
    // A revision never refunds what was spent: the second cycle adds to the first.
    expect(tokens[2]).toBeGreaterThan(tokens[0]!);
    expect(tokens[3]).toBe(tokens[2]);
    expect(out).toContain("review_change: completed after 1 correction(s)");

    const dir = join(root, "demo");
    // Nothing the fake provider could not answer, nothing to an outside host.
    expect(JSON.parse(await readFile(join(dir, "cli", "provider-failures.json"), "utf8"))).toEqual([]);
    // The six stage calls reached the provider through pi; the revised diff reached the last three.
    const replies = (await readFile(join(dir, "cli", "provider-requests.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { reply: { text?: string } | null }).reply?.text)
      .filter((text): text is string => typeof text === "string");
    expect(replies.map((text) => text.split(": ")[1])).toEqual([FIRST, FIRST, FIRST, REVISED, REVISED, REVISED]);

    // What the run journaled is pi's answer to each call, in order.
    const store = createFsStore({ dir: join(dir, "workflow-store") });
    try {
      const runs = (await store.docs.list(["workflow-runs"]))._unsafeUnwrap().items;
      expect(runs).toHaveLength(1);
      const journal = (await store.logs.read(["workflow-journal", runs[0]!.key[1]!]))._unsafeUnwrap();
      const calls = journal.map((record) => record.value as { callIndex?: number; result?: { ok: boolean; text?: string } }).filter((value) => typeof value.callIndex === "number");
      expect(calls.map((call) => call.callIndex)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(calls.every((call) => call.result?.ok === true)).toBe(true);
      expect(calls.map((call) => call.result!.text)).toEqual(replies);
    } finally {
      await store.close();
    }
  });
});
