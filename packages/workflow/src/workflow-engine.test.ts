import { canonicalJson, KeelError } from "@keel/core";
import { describe, expect, it } from "vitest";
import { createCatalog, type RunStatus } from "./index.js";
import { MODELS, issueTask, makeEngine, reviewTask, scriptedExecutor } from "../../../test/support/workflow-harness.js";
import { readRun } from "./internal/engine-context.js";

const bytes = (value: unknown) => Buffer.byteLength(canonicalJson(value), "utf8");

describe("review_change end to end", () => {
  it("runs the local stages to the decide checkpoint and completes on accept", async () => {
    const { engine, calls, events } = makeEngine();
    const started = (await engine.start(reviewTask()))._unsafeUnwrap();
    expect(started).toMatchObject({ status: "ready", version: 1, workflow: { id: "review_change" } });
    const step = (await engine.step(started.runId, { version: 1 }))._unsafeUnwrap();
    expect(step.status.status).toBe("awaiting_checkpoint");
    expect(step.status.awaiting).toMatchObject({ stage: "decide", final: true });
    expect(step.status.stages.map((stage) => [stage.id, stage.status])).toEqual([
      ["explore", "completed"],
      ["review", "completed"],
      ["security_review", "skipped"],
      ["resource_review", "skipped"],
      ["decide", "awaiting"],
    ]);
    expect(step.status.stages.filter((stage) => stage.status === "skipped").every((stage) => stage.attempts === 0 && stage.packets === 0)).toBe(true);
    expect(calls.map((call) => call.stage)).toEqual(["explore", "review"]);
    expect(step.ran.map((call) => [call.stage, call.source, call.ok])).toEqual([
      ["explore", "live", true],
      ["review", "live", true],
    ]);
    const reviewPrompt = JSON.parse(calls[1]!.prompt) as { packets: { stage: string; digest: string }[] };
    expect(reviewPrompt.packets.map((packet) => packet.stage)).toEqual(["explore"]);
    expect(reviewPrompt.packets[0]!.digest).toBe(step.ran[0]!.packetDigest);
    const done = (await engine.checkpoint(started.runId, { version: step.status.version, action: "accept", note: "ship it, secret reasons" }))._unsafeUnwrap();
    expect(done).toMatchObject({ status: "completed", terminal: true, outcome: { reason: "accepted" } });
    expect(done.checkpoints.at(-1)!.noteDigest).toMatch(/^sha256:/);
    expect(events.map((event) => event.type)).toEqual([
      "workflow.run.started",
      "workflow.stage.started",
      "workflow.stage.completed",
      "workflow.stage.started",
      "workflow.stage.completed",
      "workflow.stage.completed",
      "workflow.stage.completed",
      "workflow.run.paused",
      "workflow.checkpoint.recorded",
      "workflow.run.completed",
    ]);
    const telemetry = JSON.stringify(events);
    expect(telemetry).not.toContain("secret reasons");
    expect(telemetry).not.toContain("parser change");
    expect(telemetry).not.toContain("+new");
    for (const event of events) expect(Object.keys(event).sort()).toEqual(["at", "runId", "stage", "status", "type", "version"]);
  });

  it("security and resource reviews run on risk and size, on the original evidence only", async () => {
    const { engine, calls } = makeEngine();
    const run = (await engine.start(reviewTask("risky", { risk: "high", complexity: "large" })))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(calls.map((call) => call.stage)).toEqual(["explore", "review", "security_review", "resource_review"]);
    expect(step.status.stages.every((stage) => stage.status !== "skipped")).toBe(true);
    for (const call of calls.slice(2)) {
      const prompt = JSON.parse(call.prompt) as { packets: unknown[]; evidence: { diff: string } };
      expect(prompt.packets).toEqual([]);
      expect(prompt.evidence.diff).toContain("+new");
    }
  });

  it("plan writes nothing and shows skipped stages and routing", async () => {
    const { engine, store } = makeEngine();
    const plan = (await engine.plan(reviewTask()))._unsafeUnwrap();
    expect(plan.stages.map((stage) => stage.status)).toEqual(["pending", "pending", "skipped", "skipped", "pending"]);
    expect(plan.stages[2]).toMatchObject({ skipReason: "condition" });
    expect(plan.stages[0]!.routing).toMatchObject({ kind: "selected", model: "local-small", candidates: ["local-small", "local-medium"] });
    expect((await store.docs.list(["workflow-runs"]))._unsafeUnwrap().items).toEqual([]);
  });
});

describe("implement_issue with checkpoints", () => {
  async function toFinal() {
    const harness = makeEngine();
    const { engine } = harness;
    const run = (await engine.start(issueTask()))._unsafeUnwrap();
    const first = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(first.status).toMatchObject({ status: "awaiting_checkpoint", awaiting: { stage: "implement", final: false } });
    expect(first.ran.map((call) => call.stage)).toEqual(["explore", "plan"]);
    const implemented = (
      await engine.checkpoint(run.runId, { version: first.status.version, action: "accept", evidence: { diff: "+fixed", testOutput: "1 failing: pager last item", validationStatus: "failed" } })
    )._unsafeUnwrap();
    expect(implemented).toMatchObject({ status: "ready", currentStage: "test_analysis" });
    const second = (await engine.step(run.runId, { version: implemented.version }))._unsafeUnwrap();
    expect(second.ran.map((call) => call.stage)).toEqual(["test_analysis", "review"]);
    expect(second.status).toMatchObject({ status: "awaiting_checkpoint", awaiting: { stage: "final", final: true } });
    return { ...harness, runId: run.runId, atFinal: second };
  }

  it("accepting the final checkpoint with failed checks needs acknowledgeUnverifiedChecks", async () => {
    const { engine, runId, atFinal } = await toFinal();
    const refused = await engine.checkpoint(runId, { version: atFinal.status.version, action: "accept" });
    expect(refused._unsafeUnwrapErr()).toMatchObject({ code: "invalid_input", details: { reason: "unverified_checks", validationStatus: "failed" } });
    const done = (await engine.checkpoint(runId, { version: atFinal.status.version, action: "accept", acknowledgeUnverifiedChecks: true, disposition: "merged with a known flaky test" }))._unsafeUnwrap();
    expect(done).toMatchObject({ status: "completed", outcome: { details: { disposition: "merged with a known flaky test" } } });
  });

  it("revise resumes after the implementation checkpoint, invalidates old packets and keeps spent budget spent", async () => {
    const { engine, runId, atFinal, calls } = await toFinal();
    const spentBefore = atFinal.status.budget!.settled.calls;
    const oldPacket = atFinal.ran[0]!;
    const revised = (await engine.checkpoint(runId, { version: atFinal.status.version, action: "revise", evidence: { diff: "+fixed properly", testOutput: "all passed", validationStatus: "passed" } }))._unsafeUnwrap();
    expect(revised).toMatchObject({ status: "ready", currentStage: "test_analysis", corrections: { used: 1, limit: 2 } });
    expect(revised.packets.invalidated).toBe(2);
    expect(revised.stages.find((stage) => stage.id === "explore")!.status).toBe("completed");
    const stale = await engine.step(runId, { version: revised.version, packets: [{ digest: oldPacket.packetDigest!, packet: oldPacket.packet! }] });
    expect(stale._unsafeUnwrapErr()).toMatchObject({ code: "invalid_input", details: { reason: "stale_packet" } });
    const again = (await engine.step(runId, { version: revised.version }))._unsafeUnwrap();
    expect(again.ran.map((call) => call.stage)).toEqual(["test_analysis", "review"]);
    expect(again.ran[0]!.packetDigest).not.toBe(oldPacket.packetDigest);
    expect(again.status.budget!.settled.calls).toBe(spentBefore + 2);
    expect(calls).toHaveLength(6);
    const done = (await engine.checkpoint(runId, { version: again.status.version, action: "accept" }))._unsafeUnwrap();
    expect(done.status).toBe("completed");
  });

  it("correction cycles are shared and capped", async () => {
    const { engine, runId, atFinal } = await toFinal();
    let version = atFinal.status.version;
    for (let cycle = 1; cycle <= 2; cycle++) {
      const revised = (await engine.checkpoint(runId, { version, action: "revise", evidence: { diff: `+attempt ${cycle}` } }))._unsafeUnwrap();
      version = (await engine.step(runId, { version: revised.version }))._unsafeUnwrap().status.version;
    }
    const third = await engine.checkpoint(runId, { version, action: "revise", evidence: { diff: "+attempt 3" } });
    expect(third._unsafeUnwrapErr()).toMatchObject({ code: "limit_exceeded", details: { reason: "corrections_exhausted" } });
    expect((await engine.checkpoint(runId, { version, action: "revise" }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("reject and abort are terminal; nothing advances afterwards", async () => {
    const { engine, runId, atFinal } = await toFinal();
    const rejected = (await engine.checkpoint(runId, { version: atFinal.status.version, action: "reject" }))._unsafeUnwrap();
    expect(rejected).toMatchObject({ status: "rejected", terminal: true });
    expect((await engine.step(runId, { version: rejected.version }))._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "terminal" } });
    expect((await engine.abort(runId, { version: rejected.version }))._unsafeUnwrapErr().code).toBe("conflict");
  });

  it("review workflows revise from exploration", async () => {
    const { engine } = makeEngine();
    const run = (await engine.start(reviewTask()))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    const revised = (await engine.checkpoint(run.runId, { version: step.status.version, action: "revise", evidence: { diff: "+newer" } }))._unsafeUnwrap();
    expect(revised).toMatchObject({ currentStage: "explore", status: "ready" });
    expect(revised.stages.map((stage) => stage.status)).toEqual(["pending", "pending", "skipped", "skipped", "pending"]);
  });
});

describe("versions, checkpoints and task identity", () => {
  it("a stale version fails with conflict and replays nothing", async () => {
    const { engine, calls } = makeEngine();
    const run = (await engine.start(reviewTask()))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(calls).toHaveLength(2);
    expect((await engine.step(run.runId, { version: 1 }))._unsafeUnwrapErr()).toMatchObject({ code: "conflict" });
    expect((await engine.checkpoint(run.runId, { version: 1, action: "accept" }))._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "stale_version" } });
    expect((await engine.abort(run.runId, { version: 1 }))._unsafeUnwrapErr().code).toBe("conflict");
    expect(calls).toHaveLength(2);
    expect((await engine.status(run.runId))._unsafeUnwrap().version).toBe(step.status.version);
  });

  it("no local stage can advance a checkpoint: step at a checkpoint is refused", async () => {
    const { engine } = makeEngine();
    const run = (await engine.start(reviewTask()))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect((await engine.step(run.runId, { version: step.status.version }))._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "awaiting_checkpoint" } });
    expect((await engine.checkpoint(run.runId, { version: 1, action: "accept" })).isErr()).toBe(true);
  });

  it("the same task id returns the live run; a changed objective, workflow, risk or scope is refused", async () => {
    const { engine } = makeEngine();
    const first = (await engine.start(reviewTask("same")))._unsafeUnwrap();
    const again = (await engine.start(reviewTask("same")))._unsafeUnwrap();
    expect(again.runId).toBe(first.runId);
    for (const change of [{ objective: "something else" }, { workflow: "implement_issue" }, { risk: "high" }, { scope: ["src"] }, { complexity: "large" }]) {
      const refused = await engine.start(reviewTask("same", change));
      expect(refused._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "task_changed", changed: [Object.keys(change)[0]] } });
    }
  });

  it("restarting an ended task makes a new run that never resets the spent budget", async () => {
    const { engine } = makeEngine();
    const first = (await engine.start(reviewTask("again")))._unsafeUnwrap();
    const step = (await engine.step(first.runId, { version: 1 }))._unsafeUnwrap();
    const spent = step.status.budget!.settled;
    (await engine.abort(first.runId, { version: step.status.version }))._unsafeUnwrap();
    const second = (await engine.start(reviewTask("again")))._unsafeUnwrap();
    expect(second.runId).not.toBe(first.runId);
    expect(second.budget!.settled).toEqual(spent);
    const after = (await engine.step(second.runId, { version: 1 }))._unsafeUnwrap();
    expect(after.status.budget!.settled.calls).toBe(spent.calls + 2);
  });

  it("refuses new runs past the retained-run cap", async () => {
    const { engine } = makeEngine({ maxRetainedRuns: 2 });
    (await engine.start(reviewTask("a")))._unsafeUnwrap();
    (await engine.start(reviewTask("b")))._unsafeUnwrap();
    expect((await engine.start(reviewTask("c")))._unsafeUnwrapErr()).toMatchObject({ code: "limit_exceeded", details: { reason: "retained_run_cap", runs: 2 } });
  });
});

describe("evidence, budgets and routing inside a run", () => {
  it("a skill refuses empty diff evidence: the step blocks and resumes with evidence", async () => {
    const { engine, calls } = makeEngine();
    const run = (await engine.start(reviewTask("nodiff", { evidence: { context: "no diff yet" } })))._unsafeUnwrap();
    const blocked = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(blocked.status).toMatchObject({ status: "ready", currentStage: "review", outcome: { reason: "missing_evidence", details: { need: "diff" } } });
    expect(calls.map((call) => call.stage)).toEqual(["explore"]);
    const resumed = (await engine.step(run.runId, { version: blocked.status.version, evidence: { diff: "+x" } }))._unsafeUnwrap();
    expect(resumed.status.status).toBe("awaiting_checkpoint");
    // The diff the run was missing does not make explore run (and be paid for) again: its packet still feeds the review.
    expect(resumed.ran.map((call) => call.stage)).toEqual(["review"]);
    expect(calls.map((call) => call.stage)).toEqual(["explore", "review"]);
    const reviewPrompt = JSON.parse(calls[1]!.prompt) as { packets: { stage: string }[]; evidence: { diff: string } };
    expect(reviewPrompt.packets.map((packet) => packet.stage)).toEqual(["explore"]);
    expect(reviewPrompt.evidence.diff).toBe("+x");
    expect(resumed.status.packets).toEqual({ current: 2, invalidated: 0 });
  });

  it("an exhausted budget hands off (terminal, with the reason), never crashes", async () => {
    const { engine, calls } = makeEngine({ limits: { calls: 1 } });
    const run = (await engine.start(reviewTask()))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(step.status).toMatchObject({ status: "handed_off", terminal: true, outcome: { reason: "budget_exceeded", details: { dimension: "calls", stage: "review" } } });
    expect(calls).toHaveLength(1);
    expect(step.status.budget!.limits.calls).toMatchObject({ value: 1, source: "global" });
  });

  it("workflow and profile limits intersect with the global ones", async () => {
    const profile = { schemaVersion: 1, id: "tight", version: "1.0.0", description: "tight", budget: { calls: 3 } };
    const { engine } = makeEngine({ limits: { calls: 10 }, definitions: { profiles: [profile] as never } });
    const run = (await engine.start(reviewTask("p", { profile: "tight" })))._unsafeUnwrap();
    expect(run.budget!.limits.calls).toMatchObject({ value: 3, source: "profile" });
  });

  it("an unmet role minimum hands off with the gate and values; the cap is never raised", async () => {
    const weak = MODELS.filter((model) => model.strength < 40);
    const { engine, calls } = makeEngine({ models: weak });
    const run = (await engine.start(reviewTask()))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(step.status).toMatchObject({ status: "handed_off", outcome: { reason: "model_ineligible", details: { gate: "strength", required: 40, best: 30, stage: "review" } } });
    expect(calls.map((call) => call.model.id)).toEqual(["local-small"]);
  });

  it("a lowered tier cap takes effect on the next routing attempt", async () => {
    const { engine, calls } = makeEngine();
    const run = (await engine.start(reviewTask()))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1, tierCap: "light" }))._unsafeUnwrap();
    expect(calls.map((call) => call.model.id)).toEqual(["local-small"]);
    expect(step.status.outcome).toMatchObject({ reason: "model_ineligible", details: { gate: "tier" } });
  });

  it("a failed attempt escalates only to a strictly stronger model, and attempts are capped across a stage's skills", async () => {
    const profile = {
      schemaVersion: 1,
      id: "double",
      version: "1.0.0",
      description: "two skills in one stage",
      stageOverrides: { review_change: { review: { replace: { id: "review", kind: "local", role: "reviewer", skills: ["diff_review", "security_review"], reads: ["explore"] } } } },
    };
    const failing = scriptedExecutor({ fail: (call) => (call.skill === "diff_review" && call.attempt === 1 ? new KeelError("backend_failed", "overloaded") : undefined) });
    const { engine } = makeEngine({ definitions: { profiles: [profile] as never }, executeStage: failing.executeStage });
    const run = (await engine.start(reviewTask("double", { profile: "double" })))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    const review = failing.calls.filter((call) => call.stage === "review");
    expect(review.map((call) => [call.skill, call.model.id, call.attempt])).toEqual([
      ["diff_review", "local-medium", 1],
      ["diff_review", "remote-large", 2],
    ]);
    expect(step.status).toMatchObject({ status: "handed_off", outcome: { reason: "attempts_exhausted", details: { limit: 2, skill: "security_review" } } });
    expect(step.status.stages[1]).toMatchObject({ attempts: 2, models: ["local-medium", "remote-large"], status: "handed_off" });
  });

  it("what does not fit any model's window is refused before the call", async () => {
    const small = MODELS.map((model) => ({ ...model, contextWindow: 5000 }));
    const { engine, calls } = makeEngine({ models: small });
    const run = (await engine.start(reviewTask("wide", { evidence: { diff: "d".repeat(20_000) } })))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(step.status.outcome).toMatchObject({ reason: "model_ineligible", details: { gate: "context_fit" } });
    expect(calls).toHaveLength(0);
  });
});

describe("bounded packets, steps and status", () => {
  it("cuts a long answer into a packet of at most 12,000 bytes with a marker, and a step answer to 40,000", async () => {
    const long = scriptedExecutor({ text: () => "ü".repeat(30_000) });
    const { engine } = makeEngine({ executeStage: long.executeStage });
    const run = (await engine.start(reviewTask("long", { risk: "high", complexity: "large" })))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    for (const call of step.ran) if (call.packet) {
      expect(bytes(call.packet)).toBeLessThanOrEqual(12_000);
      expect(call.packet.cut).toBe(true);
      expect(call.packet.text).toMatch(/cut by keel: \d+ bytes omitted\]$/);
    }
    expect(bytes(step)).toBeLessThanOrEqual(40_000);
    expect(step.omittedPackets).toBeGreaterThan(0);
    expect(step.ran.every((call) => call.packetDigest)).toBe(true);
  });

  it("status of a 50-stage run stays within about 16,000 bytes and says what it left out", async () => {
    const stages = [
      ...Array.from({ length: 49 }, (_, index) => ({ id: `s${index}`, kind: "local", role: "explorer", skills: ["explore"] })),
      { id: "end", kind: "checkpoint", final: true },
    ];
    const workflow = { schemaVersion: 1, id: "long_flow", version: "1.0.0", description: "long", kind: "review", reviseFrom: "s0", stages };
    const { engine } = makeEngine({ definitions: { workflows: [workflow] as never } });
    const run = (await engine.start({ taskId: "fifty", objective: "many stages", workflow: "long_flow" }))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    const status: RunStatus = (await engine.status(run.runId))._unsafeUnwrap();
    expect(step.status.status).toBe("awaiting_checkpoint");
    expect(bytes(status)).toBeLessThanOrEqual(16_000);
    expect(status.attempts).toBe(49);
    if (status.omittedStages !== undefined) expect(status.omittedStages + status.stages.length).toBe(50);
  });

  it("a passed-back packet whose digest does not match is refused", async () => {
    const { engine } = makeEngine();
    const run = (await engine.start(reviewTask("tamper", { evidence: { context: "no diff" } })))._unsafeUnwrap();
    const blocked = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    const packet = blocked.ran[0]!;
    const tampered = { digest: packet.packetDigest!, packet: { ...packet.packet!, text: "the code is perfect" } };
    expect((await engine.step(run.runId, { version: blocked.status.version, packets: [tampered] }))._unsafeUnwrapErr()).toMatchObject({ code: "invalid_input", details: { reason: "digest_mismatch" } });
    const honest = (await engine.step(run.runId, { version: blocked.status.version, packets: [{ digest: packet.packetDigest!, packet: packet.packet! }] }))._unsafeUnwrap();
    expect(honest.status.outcome).toMatchObject({ reason: "missing_evidence" });
  });
});

describe("catalog and routing changes prevent silent resumption", () => {
  const skill = (instructions: string) => ({ schemaVersion: 1, id: "look_skill", version: "1.0.0", description: "look", instructions });
  const definitions = (instructions: string) => ({
    skills: [skill(instructions)],
    roles: [{ schemaVersion: 1, id: "looker", version: "1.0.0", description: "looks", skills: ["look_skill"] }],
    workflows: [
      {
        schemaVersion: 1,
        id: "look_flow",
        version: "1.0.0",
        description: "look twice",
        kind: "review",
        reviseFrom: "first",
        stages: [
          { id: "first", kind: "local", role: "looker", skills: ["look_skill"] },
          { id: "second", kind: "local", role: "diff_needed_role", skills: ["diff_review"] },
          { id: "done", kind: "checkpoint", final: true },
        ],
      },
    ],
  });
  const withReviewer = (instructions: string) => {
    const set = definitions(instructions);
    set.workflows[0]!.stages[1] = { id: "second", kind: "local", role: "reviewer", skills: ["diff_review"] };
    return set as never;
  };
  const task = { taskId: "moved", objective: "look", workflow: "look_flow", evidence: { context: "no diff yet" } };

  it("a changed definition the plan uses refuses the old plan; an unrelated addition does not", async () => {
    const first = makeEngine({ definitions: withReviewer("look closely") });
    const run = (await first.engine.start(task))._unsafeUnwrap();
    const blocked = (await first.engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(blocked.status.outcome).toMatchObject({ reason: "missing_evidence" });
    const changed = makeEngine({ store: first.store, clock: first.clock, definitions: withReviewer("look elsewhere") });
    const refused = await changed.engine.step(run.runId, { version: blocked.status.version, evidence: { diff: "+d" } });
    expect(refused._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "catalog_changed" } });
    expect(refused._unsafeUnwrapErr().message).toMatch(/abort it and start the task again/);
    const extra = { schemaVersion: 1, id: "unused", version: "1.0.0", description: "" };
    const unrelated = makeEngine({ store: first.store, clock: first.clock, definitions: { ...(withReviewer("look closely") as object), profiles: [extra] } as never });
    expect((await unrelated.engine.step(run.runId, { version: blocked.status.version, evidence: { diff: "+d" } })).isOk()).toBe(true);
  });

  it("a changed model registry refuses the old plan", async () => {
    const first = makeEngine();
    const run = (await first.engine.start(reviewTask("routing")))._unsafeUnwrap();
    const routing = makeEngine({ store: first.store, clock: first.clock, models: MODELS.slice(1) });
    expect((await routing.engine.step(run.runId, { version: 1 }))._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "routing_changed" } });
  });
});

describe("budgets, packet retention and profile roles", () => {
  it("reserves the role's timeout before a call and refunds the unused known time", async () => {
    const { engine } = makeEngine();
    const run = (await engine.start(reviewTask("time")))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    // Two calls of 50 ms each: 2 × 600,000 ms were reserved, the unused time came back.
    expect(step.status.budget).toMatchObject({ reserved: { timeMs: 0, calls: 0, tokens: 0 }, settled: { timeMs: 100, calls: 2 }, openReservations: 0 });
    // Token reservations (the conservative estimate) are never refunded.
    expect(step.status.budget!.settled.tokens).toBeGreaterThan(200);
  });

  it("the store keeps packet digests only, unless the host opts in to contents", async () => {
    for (const retain of [false, true]) {
      const { engine, store } = makeEngine({ retainPacketContents: retain });
      const run = (await engine.start(reviewTask(`retain-${retain}`)))._unsafeUnwrap();
      (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
      const doc = (await readRun({ store }, run.runId))._unsafeUnwrap().value as { packets: { digest: string; content?: unknown }[] };
      expect(doc.packets).toHaveLength(2);
      expect(doc.packets.every((packet) => packet.digest.startsWith("sha256:"))).toBe(true);
      expect(doc.packets.every((packet) => (packet.content !== undefined) === retain)).toBe(true);
    }
  });

  it("a profile can disable a role (its stages are skipped) and enable a role that is off by default", async () => {
    const quiet = { schemaVersion: 1, id: "quiet", version: "1.0.0", description: "no explorer", disableRoles: ["explorer"] };
    const offRole = { schemaVersion: 1, id: "auditor", version: "1.0.0", description: "off by default", skills: ["diff_review"], enabled: false };
    const flow = {
      schemaVersion: 1,
      id: "audit_flow",
      version: "1.0.0",
      description: "audit",
      kind: "review",
      reviseFrom: "audit",
      stages: [{ id: "audit", kind: "local", role: "auditor", skills: ["diff_review"] }, { id: "end", kind: "checkpoint", final: true }],
    };
    const loud = { schemaVersion: 1, id: "loud", version: "1.0.0", description: "audits", enableRoles: ["auditor"] };
    const { engine } = makeEngine({ definitions: { profiles: [quiet, loud] as never, roles: [offRole] as never, workflows: [flow] as never } });
    const plan = (await engine.plan(reviewTask("quiet", { profile: "quiet" })))._unsafeUnwrap();
    expect(plan.stages.find((stage) => stage.id === "explore")).toMatchObject({ status: "skipped", skipReason: "role_disabled" });
    const off = (await engine.plan({ taskId: "audit-off", objective: "audit", workflow: "audit_flow" }))._unsafeUnwrap();
    expect(off.stages[0]).toMatchObject({ status: "skipped", skipReason: "role_disabled" });
    const on = (await engine.plan({ taskId: "audit-on", objective: "audit", workflow: "audit_flow", profile: "loud" }))._unsafeUnwrap();
    expect(on.stages[0]).toMatchObject({ status: "pending" });
  });

  it("profile instructions and authority document paths reach the prompt; the documents are never read", async () => {
    const guided = { schemaVersion: 1, id: "guided", version: "1.0.0", description: "", instructions: "prefer small diffs", authorityDocuments: ["docs/does-not-exist.md"] };
    const { engine, calls } = makeEngine({ definitions: { profiles: [guided] as never } });
    const run = (await engine.start(reviewTask("guided", { profile: "guided" })))._unsafeUnwrap();
    (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    const prompt = JSON.parse(calls[0]!.prompt) as { profileInstructions: string; authorityDocuments: string[] };
    expect(prompt).toMatchObject({ profileInstructions: "prefer small diffs", authorityDocuments: ["docs/does-not-exist.md"] });
  });
});
