import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createEventBus, createManualClock, type KeelError } from "@keel/core";
import { runCli } from "@keel/cli";
import { createRoleSessions, type SessionPolicy, type TurnOutcome, type TurnPlan } from "@keel/sessions";
import { createMemoryStore } from "@keel/store";
import { createJsonlEventSink } from "@keel/telemetry";
import { okAsync, type ResultAsync } from "neverthrow";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ANSI, captureIo, hasStackTrace, spawnKeel, temporaryDirectory } from "./support/cli-harness.js";

let scratch: { dir: string; remove: () => void };
let eventsFile: string;

function execute(plan: TurnPlan): ResultAsync<TurnOutcome, KeelError> {
  return okAsync({
    text: "done",
    threadId: plan.threadId ?? `thread-${plan.policy}-${plan.turn}`,
    usage: { inputUncached: 500 * plan.turn, cacheRead: 0, cacheWrite: 0, output: 20, reasoning: null, costUsd: null },
    promptBytes: plan.action === "resumed" ? 100 : 1_000,
  });
}

/** Records the events of three engineer turns under each policy, through the real JSONL sink. */
async function writeEvents(file: string, policies: readonly SessionPolicy[]): Promise<void> {
  const clock = createManualClock();
  const events = createEventBus({ clock });
  const sink = createJsonlEventSink({ file });
  const detach = sink.attach(events);
  for (const policy of policies) {
    const sessions = createRoleSessions({ store: createMemoryStore({ clock }), events, clock, policy });
    for (let turn = 0; turn < 3; turn++) {
      clock.advance(1_000);
      const request = { missionId: `m-${policy}`, role: "engineer", backend: { id: "scripted", resumable: true }, objectiveRevision: 1 };
      (await sessions.runTurn(request, execute))._unsafeUnwrap();
    }
    await sessions.close();
  }
  (await sink.flush())._unsafeUnwrap();
  detach();
  (await sink.close())._unsafeUnwrap();
}

beforeEach(async () => {
  scratch = temporaryDirectory("report");
  eventsFile = path.join(scratch.dir, "events.jsonl");
  await writeEvents(eventsFile, ["fresh", "rolling"]);
});
afterEach(() => scratch.remove());

describe("keel report", () => {
  it("prints the policy comparison of an events file", async () => {
    const io = captureIo();
    expect(await runCli(["report", eventsFile], io)).toBe(0);
    // The text opens with the headline the HTML page opens with, then the table.
    expect(io.out).toMatch(/^2 policies compared over 6 turns\. [^\n]+\n\n/);
    expect(io.out).toContain("2 policies, 6 turns");
    expect(io.out).toMatch(/^fresh +3 +3\/0\/0 +3,000 /m);
    expect(io.out).toMatch(/^rolling +3 +1\/2\/0 +1,200 /m);
    expect(io.out).toMatch(/^rolling +engineer +3 +1\/2\/0/m);
    expect(io.out).not.toMatch(ANSI);
    expect(io.err).toBe("");
  });

  it("colours the table only when the io asks for colour", async () => {
    const io = captureIo({ color: true });
    expect(await runCli(["report", eventsFile], io)).toBe(0);
    expect(io.out).toMatch(ANSI);
  });

  it("--html also writes a self-contained page with the charts", async () => {
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["report", "events.jsonl", "--html", "out.html"], io)).toBe(0);
    const page = readFileSync(path.join(scratch.dir, "out.html"), "utf8");
    expect(page).toMatch(/^<!doctype html>/i);
    expect(page).toContain('data-chart="prompt-bytes"');
    expect(page).toContain('data-policy="rolling"');
    expect(io.out).toMatch(/rolling/);
    expect(io.err).toContain("out.html");
  });

  it("warns about a torn last line and reports the rest", async () => {
    const tornLine = readFileSync(eventsFile, "utf8").split("\n").length; // the file ends with a newline
    appendFileSync(eventsFile, '{"type":"role.session.tu');
    const io = captureIo();
    expect(await runCli(["report", eventsFile], io)).toBe(0);
    expect(io.err).toMatch(new RegExp(`^warning: line ${tornLine} of .*events\\.jsonl was torn`));
    expect(io.out).toMatch(/rolling/);
  });

  it("fails closed on damage in the middle of the file (exit 1)", async () => {
    const lines = readFileSync(eventsFile, "utf8").split("\n");
    lines[2] = "not json";
    writeFileSync(eventsFile, lines.join("\n"));
    const io = captureIo();
    expect(await runCli(["report", eventsFile], io)).toBe(1);
    expect(io.err).toMatch(/^error \(corrupt\): .*line 3/);
    expect(io.out).toBe("");
  });

  it("a missing file is exit 1; an HTML path that cannot be written is exit 1", async () => {
    const missing = captureIo();
    expect(await runCli(["report", path.join(scratch.dir, "nope.jsonl")], missing)).toBe(1);
    expect(missing.err).toMatch(/^error \(not_found\)/);
    const unwritable = captureIo();
    const target = path.join(scratch.dir, "no-such-dir", "out.html");
    expect(await runCli(["report", eventsFile, "--html", target], unwritable)).toBe(1);
    expect(unwritable.err).toMatch(/^error \(io_failed\)/);
    expect(existsSync(target)).toBe(false);
  });

  it("no file, two files, or --html without a path are usage errors (exit 2)", async () => {
    expect(await runCli(["report"], captureIo())).toBe(2);
    expect(await runCli(["report", "a.jsonl", "b.jsonl"], captureIo())).toBe(2);
    expect(await runCli(["report", eventsFile, "--html"], captureIo())).toBe(2);
  });

  it("--help shows the options and an example", async () => {
    const io = captureIo();
    expect(await runCli(["report", "--help"], io)).toBe(0);
    expect(io.out).toContain("--html");
    expect(io.out).toContain("Example:");
  });

  it("the real binary reports, and exits 1 without a stack trace for a missing file", async () => {
    const missing = await spawnKeel(["report", path.join(scratch.dir, "nope.jsonl")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("not_found");
    expect(hasStackTrace(missing.stderr)).toBe(false);
    const reported = await spawnKeel(["report", eventsFile]);
    expect(reported.code).toBe(0);
    expect(reported.stdout).toMatch(/rolling/);
    expect(reported.stdout).not.toMatch(ANSI);
  });
});
