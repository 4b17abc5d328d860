import fs, { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createBudget } from "@keel/budget";
import type { KeelStore } from "@keel/store";
import { createCatalog, createWorkflowEngine, type ExecuteStage, type WorkflowEngine } from "@keel/workflow";
import { ok } from "neverthrow";
import { afterAll, bench, describe } from "vitest";

/**
 * The bookkeeping of one workflow stage on the fs store: `step` (lease, budget reserve and
 * settle, one journal append that also commits the run's state) plus `status`, beside one
 * durable put, interleaved. The model call is a no-op here, so what is timed is Keel's own cost.
 * Durable writes are counted once, two ways, and printed: the store calls that write durably
 * (document put/delete, log append/delete; lease changes are counted apart, since on the fs
 * store they are renames, not fsynced), and the fsyncs the fs store makes, as a multiple of
 * the fsyncs of one durable put.
 */

// Count fsyncs: patched before the fs store is loaded, which binds fs.fsync at load.
const syncs = { count: 0 };
for (const name of ["fsync", "fdatasync"] as const) {
  const original = fs[name];
  (fs as unknown as Record<string, unknown>)[name] = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    syncs.count++;
    return original(fd, callback);
  };
}
const { createFsStore } = await import("@keel/store-fs");

const dir = mkdtempSync(path.join(tmpdir(), "keel-workflow-bench-"));
const inner = createFsStore({ dir });
const writes = { durable: 0, lease: 0 };
const counted: KeelStore = {
  ...inner,
  docs: { ...inner.docs, get: inner.docs.get, list: inner.docs.list, put: (...args) => (writes.durable++, inner.docs.put(...args)), delete: (...args) => (writes.durable++, inner.docs.delete(...args)) },
  logs: { ...inner.logs, read: inner.logs.read, head: inner.logs.head, list: inner.logs.list, append: (...args) => (writes.durable++, inner.logs.append(...args)), delete: (...args) => (writes.durable++, inner.logs.delete(...args)) },
  leases: { ...inner.leases, current: inner.leases.current, acquire: (...args) => (writes.lease++, inner.leases.acquire(...args)), renew: (...args) => (writes.lease++, inner.leases.renew(...args)), release: (...args) => (writes.lease++, inner.leases.release(...args)) },
  check: (options) => inner.check(options),
  close: () => inner.close(),
};

/** Runs `work` and answers the durable store writes, the lease changes and the fsyncs it made. */
async function measure(work: () => Promise<unknown>): Promise<{ durable: number; lease: number; fsyncs: number }> {
  writes.durable = 0;
  writes.lease = 0;
  syncs.count = 0;
  await work();
  return { durable: writes.durable, lease: writes.lease, fsyncs: syncs.count };
}

const executeStage: ExecuteStage = async (call) => ok({ text: `${call.stage}: nothing to report`, tokens: 10, durationMs: 1 });
const oneStage = { schemaVersion: 1, id: "one_stage", version: "1.0.0", description: "one local stage", kind: "review", reviseFrom: "look", stages: [{ id: "look", kind: "local", role: "explorer", skills: ["explore"] }, { id: "done", kind: "checkpoint", final: true }] };
const twoSegments = {
  schemaVersion: 1,
  id: "two_segments",
  version: "1.0.0",
  description: "a stage, a checkpoint, a stage",
  kind: "review",
  reviseFrom: "look",
  stages: [{ id: "look", kind: "local", role: "explorer", skills: ["explore"] }, { id: "mid", kind: "checkpoint" }, { id: "again", kind: "local", role: "explorer", skills: ["explore"] }, { id: "done", kind: "checkpoint", final: true }],
};
const fifty = {
  schemaVersion: 1,
  id: "fifty_stages",
  version: "1.0.0",
  description: "fifty stages",
  kind: "review",
  reviseFrom: "s0",
  stages: [...Array.from({ length: 49 }, (_, index) => ({ id: `s${index}`, kind: "local", role: "explorer", skills: ["explore"] })), { id: "done", kind: "checkpoint", final: true }],
};
const catalog = createCatalog({ workflows: [oneStage, twoSegments, fifty] as never })._unsafeUnwrap();
const engine: WorkflowEngine = createWorkflowEngine({
  store: counted,
  catalog,
  budget: createBudget({ store: counted }),
  executeStage,
  models: [{ id: "local", strength: 60, contextWindow: 128_000, location: "installed", tier: "medium" }],
});

let next = 0;
async function startRun(workflow = "one_stage"): Promise<{ runId: string; version: number }> {
  const run = (await engine.start({ taskId: `bench-${next++}`, objective: "measure", workflow, evidence: { diff: "+x" } }))._unsafeUnwrap();
  return { runId: run.runId, version: run.version };
}

// Counted once. The first step of a run also creates the run's lease directory (one directory
// fsync, once per run); a later step is the steady state.
const put = await measure(async () => (await counted.docs.put(["bench", "probe"], { value: 1 }, { unconditional: true }))._unsafeUnwrap());
const probe = await startRun("two_segments");
const first = await measure(async () => (await engine.step(probe.runId, { version: probe.version }))._unsafeUnwrap());
let version = (await engine.status(probe.runId))._unsafeUnwrap().version;
const accept = await measure(async () => (version = (await engine.checkpoint(probe.runId, { version, action: "accept" }))._unsafeUnwrap().version));
const steady = await measure(async () => (await engine.step(probe.runId, { version }))._unsafeUnwrap());
const status = await measure(async () => (await engine.status(probe.runId))._unsafeUnwrap());
const long = await startRun("fifty_stages");
const fiftyStep = await measure(async () => (await engine.step(long.runId, { version: long.version }))._unsafeUnwrap());
const times = (fsyncs: number) => `${(fsyncs / put.fsyncs).toFixed(2)}× the fsyncs of one durable put`;
console.log(
  [
    `workflow durable writes on the fs store (one durable put: ${put.durable} write, ${put.fsyncs} fsyncs):`,
    `  one-stage step, steady state: ${steady.durable} durable writes + ${steady.lease} lease changes (renames), ${steady.fsyncs} fsyncs = ${times(steady.fsyncs)}`,
    `  one-stage step, first of its run: ${first.durable} durable writes + ${first.lease} lease changes, ${first.fsyncs} fsyncs = ${times(first.fsyncs)} (the lease directory is made once per run)`,
    `  status: ${status.durable} durable writes, ${status.fsyncs} fsyncs; checkpoint accept: ${accept.durable} durable write, ${accept.fsyncs} fsyncs`,
    `  a 49-stage step: ${fiftyStep.durable} durable writes = ${(fiftyStep.durable / 49).toFixed(2)} per stage, ${fiftyStep.lease} lease changes, ${fiftyStep.fsyncs} fsyncs = ${(fiftyStep.fsyncs / 49 / put.fsyncs).toFixed(2)} puts per stage`,
  ].join("\n"),
);

// A pool of runs, each stepped once past its first checkpoint, so that each timed iteration
// steps a steady-state stage of a fresh run.
const pool: { runId: string; version: number }[] = [];
for (let index = 0; index < 160; index++) {
  const run = await startRun("two_segments");
  const stepped = (await engine.step(run.runId, { version: run.version }))._unsafeUnwrap();
  const accepted = (await engine.checkpoint(run.runId, { version: stepped.status.version, action: "accept" }))._unsafeUnwrap();
  pool.push({ runId: run.runId, version: accepted.version });
}
let puts = 0;

afterAll(async () => {
  await inner.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("workflow: one stage's bookkeeping on the fs store", () => {
  bench(
    "step + status (one stage: lease, reserve, journal with the commit, settle)",
    async () => {
      const run = pool.pop();
      if (!run) return;
      (await engine.step(run.runId, { version: run.version }))._unsafeUnwrap();
      (await engine.status(run.runId))._unsafeUnwrap();
    },
    { iterations: 150, time: 0, warmupIterations: 5 },
  );
  bench("one durable put (fs store)", async () => {
    (await inner.docs.put(["bench", `p${puts++ % 50}`], { value: puts }, { unconditional: true }))._unsafeUnwrap();
  }, { iterations: 150, time: 0, warmupIterations: 5 });
});

describe("workflow: status of a 50-stage run", () => {
  bench("status (50 stages, fs store)", async () => {
    (await engine.status(long.runId))._unsafeUnwrap();
  }, { time: 1_000 });
  bench("one durable put (fs store)", async () => {
    (await inner.docs.put(["bench", `q${puts++ % 50}`], { value: puts }, { unconditional: true }))._unsafeUnwrap();
  }, { time: 1_000 });
});
