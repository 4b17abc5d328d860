import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeelError, createManualClock } from "@keel/core";
import { createMemoryStore, type KeelStore, type LogStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { errAsync } from "neverthrow";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { issueTask, makeEngine, reviewTask, scriptedExecutor } from "../../../test/support/workflow-harness.js";
import type { ExecuteStage, WorkflowEngine } from "./index.js";

/** A store whose journal appends fail from the `failFrom`-th one on (a crash between a stage's completion and its journal record). */
function failingAppends(store: KeelStore, failFrom: number): KeelStore & { appends: () => number } {
  let count = 0;
  const logs: LogStore = {
    append: (log, records, options) => {
      // Only the run journal's appends count: the budget's close log appends on every settle.
      if (log[0] !== "workflow-journal") return store.logs.append(log, records, options);
      count += 1;
      if (count >= failFrom) return errAsync(new KeelError("io_failed", "injected: the process died before the journal record was written"));
      return store.logs.append(log, records, options);
    },
    read: (log, options) => store.logs.read(log, options),
    head: (log) => store.logs.head(log),
    delete: (log, options) => store.logs.delete(log, options),
    list: (prefix) => store.logs.list(prefix),
  };
  return { ...store, docs: store.docs, leases: store.leases, check: (options) => store.check(options), close: () => store.close(), logs, appends: () => count };
}

describe("concurrent checkpoints", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "keel-workflow-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const kind of ["memory", "fs"] as const) {
    it(`two checkpoint calls with the same version: exactly one wins (${kind} store)`, async () => {
      const clock = createManualClock();
      const store = kind === "memory" ? createMemoryStore({ clock }) : createFsStore({ dir });
      const { engine } = makeEngine({ store, clock });
      const run = (await engine.start(reviewTask()))._unsafeUnwrap();
      const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
      const version = step.status.version;
      const outcomes = await Promise.all([
        engine.checkpoint(run.runId, { version, action: "accept" }),
        engine.checkpoint(run.runId, { version, action: "revise", evidence: { diff: "+other" } }),
        engine.checkpoint(run.runId, { version, action: "reject" }),
      ]);
      const winners = outcomes.filter((outcome) => outcome.isOk());
      expect(winners).toHaveLength(1);
      for (const loser of outcomes.filter((outcome) => outcome.isErr())) expect(loser._unsafeUnwrapErr().code).toBe("conflict");
      const status = (await engine.status(run.runId))._unsafeUnwrap();
      expect(status.version).toBe(version + 1);
      expect(status.checkpoints).toHaveLength(1);
      expect(status.status).toBe(winners[0]!._unsafeUnwrap().status);
      await store.close();
    });
  }

  it("two concurrent steps on the fs store: one runs, the other is refused without running a stage", async () => {
    const store = createFsStore({ dir });
    const slow = scriptedExecutor();
    const { engine } = makeEngine({ store, clock: createManualClock(Date.now()), executeStage: async (call) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return slow.executeStage(call);
    } });
    const run = (await engine.start(reviewTask()))._unsafeUnwrap();
    const outcomes = await Promise.all([engine.step(run.runId, { version: 1 }), engine.step(run.runId, { version: 1 })]);
    expect(outcomes.filter((outcome) => outcome.isOk())).toHaveLength(1);
    expect(["lease_held", "conflict"]).toContain(outcomes.find((outcome) => outcome.isErr())!._unsafeUnwrapErr().code);
    expect(slow.calls).toHaveLength(2);
    await store.close();
  });
});

describe("crash between a stage's completion and its journal record", () => {
  it("the next step hands the run off naming the interrupted stage; continuing replays the journaled prefix and runs the rest live", async () => {
    const clock = createManualClock();
    const base = createMemoryStore({ clock });
    const store = failingAppends(base, 2);
    const first = scriptedExecutor();
    const crashing = makeEngine({ store, clock, executeStage: first.executeStage });
    const run = (await crashing.engine.start(issueTask()))._unsafeUnwrap();
    const crashed = await crashing.engine.step(run.runId, { version: 1 });
    expect(crashed._unsafeUnwrapErr().code).toBe("io_failed");
    expect(first.calls.map((call) => call.stage)).toEqual(["explore", "plan"]);
    const unchanged = (await crashing.engine.status(run.runId))._unsafeUnwrap();
    expect(unchanged).toMatchObject({ version: 1, status: "ready", currentStage: "explore" });
    expect(unchanged.budget!.openReservations).toBe(1);

    const second = scriptedExecutor();
    const resumed = makeEngine({ store: base, clock, executeStage: second.executeStage });
    const handoff = (await resumed.engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(handoff.status).toMatchObject({ status: "handed_off", version: 2, currentStage: "explore", outcome: { reason: "interrupted", details: { stage: "plan", skill: "plan", openReservations: 1, journaledCalls: 1 } } });
    expect(handoff.status.outcome!.message).toMatch(/stage "plan"/);
    expect(handoff.ran).toEqual([]);
    expect(handoff.recovered).toEqual({ openReservations: 1, journaledCalls: 1, fromCallIndex: 0 });
    expect(second.calls).toHaveLength(0);
    expect(handoff.status.budget!.openReservations).toBe(1);
    // Without the explicit continuation the run stays handed off; with it, the interrupted stage runs again.
    expect((await resumed.engine.step(run.runId, { version: 2 }))._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "interrupted", stage: "plan" } });
    const step = (await resumed.engine.step(run.runId, { version: 2, continueHandoff: true }))._unsafeUnwrap();
    expect(step.ran.map((call) => [call.stage, call.source])).toEqual([
      ["explore", "journal"],
      ["plan", "live"],
    ]);
    expect(second.calls.map((call) => call.stage)).toEqual(["plan"]);
    expect(step.status.status).toBe("awaiting_checkpoint");
    expect(step.status.budget!.openReservations).toBe(1);
    // The reservation was reported by the handoff: it stays charged and is not reported again.
    expect(step.recovered).toEqual({ openReservations: 0, journaledCalls: 1, fromCallIndex: 0 });
    const accepted = (await resumed.engine.checkpoint(run.runId, { version: step.status.version, action: "accept", evidence: { diff: "+fix", testOutput: "ok", validationStatus: "passed" } }))._unsafeUnwrap();
    const next = (await resumed.engine.step(run.runId, { version: accepted.version }))._unsafeUnwrap();
    expect(next.recovered).toBeNull();
    expect(next.status.status).toBe("awaiting_checkpoint");
  });

  it("an empty journaled text is not reused: the run hands off at that stage, and continuing runs it live", async () => {
    const clock = createManualClock();
    const base = createMemoryStore({ clock });
    const empty = scriptedExecutor({ text: () => "" });
    const crashing = makeEngine({ store: failingAppends(base, 2), clock, executeStage: empty.executeStage });
    const run = (await crashing.engine.start(issueTask()))._unsafeUnwrap();
    expect((await crashing.engine.step(run.runId, { version: 1 })).isErr()).toBe(true);
    const second = scriptedExecutor();
    const resumed = makeEngine({ store: base, clock, executeStage: second.executeStage });
    const handoff = (await resumed.engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(handoff.status.outcome).toMatchObject({ reason: "interrupted", details: { stage: "explore" } });
    const step = (await resumed.engine.step(run.runId, { version: 2, continueHandoff: true }))._unsafeUnwrap();
    expect(step.ran.map((call) => call.source)).toEqual(["live", "live"]);
    expect(second.calls).toHaveLength(2);
  });

  it("a changed call pauses with a readable diff; rerun runs it live; fail ends the run", async () => {
    const clock = createManualClock();
    const base = createMemoryStore({ clock });
    const crashing = makeEngine({ store: failingAppends(base, 2), clock });
    const run = (await crashing.engine.start(issueTask("mismatch")))._unsafeUnwrap();
    expect((await crashing.engine.step(run.runId, { version: 1 })).isErr()).toBe(true);
    const second = scriptedExecutor();
    const resumed = makeEngine({ store: base, clock, executeStage: second.executeStage });
    expect((await resumed.engine.step(run.runId, { version: 1 }))._unsafeUnwrap().status.outcome).toMatchObject({ reason: "interrupted" });
    // Evidence the run was missing changes the journaled call's prompt: the replay no longer matches.
    const paused = (await resumed.engine.step(run.runId, { version: 2, continueHandoff: true, evidence: { diff: "+the pager fix" } }))._unsafeUnwrap();
    expect(paused.status).toMatchObject({ status: "paused", outcome: { reason: "replay_mismatch", details: { callIndex: 0 } } });
    const diff = (paused.status.outcome!.details as { diff: string[] }).diff;
    expect(diff).toEqual([expect.stringMatching(/^promptDigest: recorded "sha256:[0-9a-f]+", now "sha256:[0-9a-f]+"$/)]);
    expect(second.calls).toHaveLength(0);
    const failed = makeEngine({ store: base, clock, onMismatch: "fail" });
    const fork = (await failed.engine.status(run.runId))._unsafeUnwrap();
    const rerun = (await resumed.engine.step(run.runId, { version: paused.status.version, onMismatch: "rerun" }))._unsafeUnwrap();
    expect(rerun.ran.map((call) => call.source)).toEqual(["live", "live"]);
    expect(rerun.status.status).toBe("awaiting_checkpoint");
    expect(fork.version).toBe(paused.status.version);
  });

  it("the fail policy ends the run on a mismatch", async () => {
    const clock = createManualClock();
    const base = createMemoryStore({ clock });
    const crashing = makeEngine({ store: failingAppends(base, 2), clock });
    const run = (await crashing.engine.start(issueTask("failing")))._unsafeUnwrap();
    expect((await crashing.engine.step(run.runId, { version: 1 })).isErr()).toBe(true);
    const strict = makeEngine({ store: base, clock, onMismatch: "fail" });
    expect((await strict.engine.step(run.runId, { version: 1 }))._unsafeUnwrap().status.outcome).toMatchObject({ reason: "interrupted" });
    const step = (await strict.engine.step(run.runId, { version: 2, continueHandoff: true, evidence: { diff: "+the pager fix" } }))._unsafeUnwrap();
    expect(step.status).toMatchObject({ status: "failed", terminal: true, outcome: { reason: "replay_mismatch" } });
  });
});

describe("one lease per run", () => {
  it("a live lease refuses a second step; once the crashed holder's lease expires the next step hands off with the reservation kept, and continuing runs the stage again", async () => {
    const clock = createManualClock();
    const store = createMemoryStore({ clock });
    const hung = scriptedExecutor();
    const crashed = makeEngine({ store, clock, leaseTtlMs: 5000, executeStage: (call) => {
      hung.calls.push(call);
      return new Promise(() => undefined);
    } });
    const run = (await crashed.engine.start(reviewTask()))._unsafeUnwrap();
    void crashed.engine.step(run.runId, { version: 1 });
    while (hung.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const { engine, calls } = makeEngine({ store, clock, leaseTtlMs: 5000 });
    expect((await engine.step(run.runId, { version: 1 }))._unsafeUnwrapErr().code).toBe("lease_held");
    expect((await engine.status(run.runId))._unsafeUnwrap().lease).toMatchObject({ state: "held" });
    clock.advance(6000);
    expect((await engine.status(run.runId))._unsafeUnwrap()).toMatchObject({ lease: { state: "free" }, version: 1, budget: { openReservations: 1 } });
    const handoff = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(handoff.recovered).toEqual({ openReservations: 1, journaledCalls: 0, fromCallIndex: 0 });
    expect(handoff.status).toMatchObject({ status: "handed_off", terminal: true, outcome: { reason: "interrupted", details: { stage: "explore" } }, budget: { openReservations: 1 } });
    expect(calls).toHaveLength(0);
    const step = (await engine.step(run.runId, { version: 2, continueHandoff: true }))._unsafeUnwrap();
    expect(step.recovered).toBeNull();
    expect(calls).toHaveLength(2);
    expect(step.status.budget!.openReservations).toBe(1);
    expect(step.status.budget!.reserved.calls).toBe(1);
  });
});

describe("source fingerprints", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "keel-source-"));
    await writeFile(join(root, "pager.ts"), "export const last = items.length - 1;\n");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("a source file changed between plan and step prevents silent resumption; fresh evidence resumes", async () => {
    const { engine } = makeEngine({ sourceRoot: root });
    const run = (await engine.start(reviewTask("src", { evidence: { diff: "+x", files: [{ path: "pager.ts", firstLine: 1, lastLine: 1 }] } })))._unsafeUnwrap();
    await writeFile(join(root, "pager.ts"), "export const last = items.length;\n");
    const refused = await engine.step(run.runId, { version: 1 });
    expect(refused._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "source_changed", files: ["pager.ts"] } });
    expect(refused._unsafeUnwrapErr().message).toMatch(/fresh evidence/);
    const fresh = (await engine.step(run.runId, { version: 1, evidence: { files: [{ path: "pager.ts", firstLine: 1, lastLine: 1 }] } }))._unsafeUnwrap();
    expect(fresh.status.status).toBe("awaiting_checkpoint");
  });
});

describe("packets the journal cannot rebuild", () => {
  it("a stage never runs without its inputs: missing packets must be passed back", async () => {
    const clock = createManualClock();
    const base = createMemoryStore({ clock });
    // The journal's call results are lost (read without them); its commits, the run's state, remain.
    let lost = false;
    const store: KeelStore = {
      ...base,
      docs: base.docs,
      leases: base.leases,
      check: (options) => base.check(options),
      close: () => base.close(),
      logs: {
        ...base.logs,
        append: (log, records, options) => base.logs.append(log, records, options),
        head: (log) => base.logs.head(log),
        delete: (log, options) => base.logs.delete(log, options),
        list: (prefix) => base.logs.list(prefix),
        read: (log, options) =>
          base.logs.read(log, options).map((records) => (lost && log[0] === "workflow-journal" ? records.map((record) => ({ ...record, value: { commit: (record.value as { commit?: unknown }).commit ?? null } as never })).filter((record) => (record.value as { commit: unknown }).commit !== null) : records)),
      },
    };
    const { engine } = makeEngine({ store, clock });
    const run = (await engine.start(reviewTask("lost", { evidence: { context: "no diff yet" } })))._unsafeUnwrap();
    const blocked = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    const packet = blocked.ran[0]!;
    lost = true;
    const refused = await engine.step(run.runId, { version: blocked.status.version });
    expect(refused._unsafeUnwrapErr()).toMatchObject({ code: "not_found", details: { reason: "packets_missing", digests: [packet.packetDigest] } });
    const passed = (await engine.step(run.runId, { version: blocked.status.version, packets: [{ digest: packet.packetDigest!, packet: packet.packet! }] }))._unsafeUnwrap();
    expect(passed.status.outcome).toMatchObject({ reason: "missing_evidence" });
  });
});

/** An executor whose calls wait until `release()`, and a wait for a step to hold the run's lease. */
function gatedExecutor() {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const calls = scriptedExecutor();
  const executeStage: ExecuteStage = async (call) => {
    await gate;
    return calls.executeStage(call);
  };
  return { executeStage, release: () => open() };
}

async function leaseHeld(engine: WorkflowEngine, runId: string): Promise<void> {
  while ((await engine.status(runId))._unsafeUnwrap().lease.state !== "held") await new Promise((resolve) => setTimeout(resolve, 2));
}

describe("the write path of a step", () => {
  /** A memory store that counts its durable writes by kind. */
  function countingStore() {
    const clock = createManualClock();
    const base = createMemoryStore({ clock });
    const writes: string[] = [];
    const store: KeelStore = {
      ...base,
      check: (options) => base.check(options),
      close: () => base.close(),
      docs: { ...base.docs, get: base.docs.get, list: base.docs.list, put: (key, value, condition) => (writes.push(`put ${key[0]}`), base.docs.put(key, value, condition)), delete: (key, condition) => (writes.push(`delete ${key[0]}`), base.docs.delete(key, condition)) },
      logs: { ...base.logs, read: base.logs.read, head: base.logs.head, list: base.logs.list, append: (log, records, options) => (writes.push(`append ${log[0]}`), base.logs.append(log, records, options)), delete: (log, options) => (writes.push(`delete ${log[0]}`), base.logs.delete(log, options)) },
    };
    return { store, clock, writes };
  }

  it("a one-stage step is three durable writes: reserve, one journal record carrying the commit, settle; the run document is not rewritten", async () => {
    const { store, clock, writes } = countingStore();
    const oneStage = { schemaVersion: 1, id: "one_stage", version: "1.0.0", description: "one local stage", kind: "review", reviseFrom: "look", stages: [{ id: "look", kind: "local", role: "explorer", skills: ["explore"] }, { id: "done", kind: "checkpoint", final: true }] };
    const { engine } = makeEngine({ store, clock, definitions: { workflows: [oneStage] } as never });
    const run = (await engine.start({ ...reviewTask("one"), workflow: "one_stage" }))._unsafeUnwrap();
    writes.length = 0;
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    // The budget ledger's compare-and-swap (reserve), the journal, the budget's close log (settle).
    expect(writes).toEqual(["put budget", "append workflow-journal", "append budget"]);
    const journal = (await store.logs.read(["workflow-journal", run.runId]))._unsafeUnwrap();
    expect(journal).toHaveLength(1);
    expect(journal[0]!.value).toMatchObject({ callIndex: 0, commit: { version: 2, status: "awaiting_checkpoint" } });
    expect((await engine.status(run.runId))._unsafeUnwrap()).toMatchObject({ version: step.status.version, status: "awaiting_checkpoint" });
    writes.length = 0;
    (await engine.checkpoint(run.runId, { version: step.status.version, action: "accept", acknowledgeUnverifiedChecks: true }))._unsafeUnwrap();
    expect(writes).toEqual(["append workflow-journal"]);
  });

  it("an abort while a step runs wins: the step's commit is refused with conflict and the run stays aborted", async () => {
    const clock = createManualClock();
    const store = createMemoryStore({ clock });
    const { executeStage, release } = gatedExecutor();
    const { engine } = makeEngine({ store, clock, executeStage });
    const run = (await engine.start(reviewTask("abort-race")))._unsafeUnwrap();
    const stepping = engine.step(run.runId, { version: 1 });
    await leaseHeld(engine, run.runId);
    const aborted = (await engine.abort(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(aborted).toMatchObject({ status: "aborted", version: 2 });
    release();
    const step = await stepping;
    expect(step._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "stale_version" } });
    expect((await engine.status(run.runId))._unsafeUnwrap()).toMatchObject({ status: "aborted", version: 2 });
  });

  it("a step that stalled past its lease commits nothing after another step took over", async () => {
    const clock = createManualClock();
    const store = createMemoryStore({ clock });
    const { executeStage, release } = gatedExecutor();
    const first = makeEngine({ store, clock, leaseTtlMs: 5000, executeStage });
    const run = (await first.engine.start(reviewTask("stalled")))._unsafeUnwrap();
    const stepping = first.engine.step(run.runId, { version: 1 });
    await leaseHeld(first.engine, run.runId);
    clock.advance(6000);
    const { engine } = makeEngine({ store, clock, leaseTtlMs: 5000 });
    const handoff = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(handoff.status).toMatchObject({ status: "handed_off", version: 2, outcome: { reason: "interrupted" } });
    const takeover = (await engine.step(run.runId, { version: 2, continueHandoff: true }))._unsafeUnwrap();
    expect(takeover.status).toMatchObject({ status: "awaiting_checkpoint", version: 3 });
    release();
    const late = await stepping;
    expect(["lease_lost", "conflict"]).toContain(late._unsafeUnwrapErr().code);
    expect((await engine.status(run.runId))._unsafeUnwrap()).toMatchObject({ status: "awaiting_checkpoint", version: 3 });
    // The stalled step's call is journaled nowhere: the journal holds the handoff's commit, then the takeover's calls and commit only.
    const journal = (await store.logs.read(["workflow-journal", run.runId]))._unsafeUnwrap();
    expect(journal.map((record) => (record.value as { callIndex?: number }).callIndex)).toEqual([undefined, 0, 1]);
  });
});
