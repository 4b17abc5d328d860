/**
 * Interrupted work is not replayed (issue 32): a real process steps a run over the fs store and
 * is killed in the middle of a stage's call. Once its lease expires, the next step hands the run
 * off (`interrupted`, naming the stage) with the call's reservation still charged and no call
 * made; only an explicit `continueHandoff` runs the stage again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createBudget } from "@keel/budget";
import { createFsStore } from "@keel/store-fs";
import { createCatalog, createWorkflowEngine, type StageCall } from "@keel/workflow";
import { ok } from "neverthrow";
import { afterAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "./support/store-fs-child.js";
import { MODELS, reviewTask } from "./support/workflow-harness.js";

const LEASE_TTL_MS = 1500;
const made: string[] = [];
const workers: Worker[] = [];
afterAll(() => {
  for (const worker of workers) worker.child.kill("SIGKILL");
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe("a step whose process dies mid-stage", () => {
  it("hands the run off naming the interrupted stage, keeps the reservation, and runs the stage again only when continued", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-workflow-interrupted-"));
    made.push(dir);
    const store = createFsStore({ dir });
    const calls: StageCall[] = [];
    const engine = createWorkflowEngine({
      store,
      catalog: createCatalog()._unsafeUnwrap(),
      budget: createBudget({ store }),
      models: MODELS,
      leaseTtlMs: LEASE_TTL_MS,
      executeStage: async (call) => {
        calls.push(call);
        return ok({ text: `${call.skill}: findings`, tokens: 10, durationMs: 5 });
      },
    });
    const run = (await engine.start(reviewTask("interrupted")))._unsafeUnwrap();

    const worker = startWorker("test/support/workflow-step-worker.ts", [dir, run.runId, String(LEASE_TTL_MS)]);
    workers.push(worker);
    await worker.waitFor(/^calling explore$/);
    expect((await engine.step(run.runId, { version: 1 }))._unsafeUnwrapErr().code).toBe("lease_held");
    worker.child.kill("SIGKILL");
    await worker.exited;

    // The dead holder's lease expires by itself; the reservation of its call stays open.
    while ((await engine.status(run.runId))._unsafeUnwrap().lease.state !== "free") await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await engine.status(run.runId))._unsafeUnwrap()).toMatchObject({ version: 1, status: "ready", budget: { openReservations: 1 } });

    const handoff = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(handoff.status).toMatchObject({ status: "handed_off", version: 2, outcome: { reason: "interrupted", details: { stage: "explore", skill: "explore", openReservations: 1 } }, budget: { openReservations: 1 } });
    expect(handoff.recovered).toEqual({ openReservations: 1, journaledCalls: 0, fromCallIndex: 0 });
    expect(calls).toHaveLength(0);

    // Nothing runs again until the caller says so.
    expect((await engine.step(run.runId, { version: 2 }))._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { reason: "interrupted", stage: "explore" } });
    expect(calls).toHaveLength(0);
    const continued = (await engine.step(run.runId, { version: 2, continueHandoff: true }))._unsafeUnwrap();
    expect(continued.status).toMatchObject({ status: "awaiting_checkpoint", version: 3, budget: { openReservations: 1, reserved: { calls: 1 }, settled: { calls: 2 } } });
    expect(calls.map((call) => call.stage)).toEqual(["explore", "review"]);
    await store.close();
  });
});
