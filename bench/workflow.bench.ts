import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createBudget } from "@keel/budget";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createCatalog, createWorkflowEngine, type ExecuteStage, type WorkflowEngine } from "@keel/workflow";
import { ok } from "neverthrow";
import { afterAll, bench, describe } from "vitest";

/**
 * The bookkeeping of one workflow stage on the fs store: `step` (lease, budget reserve and
 * settle, journal append, run write) plus `status`, beside one durable put, interleaved. The
 * model call itself is a no-op here, so what is timed is Keel's own cost. Durable writes are
 * counted separately, once, and printed.
 */

const dir = mkdtempSync(path.join(tmpdir(), "keel-workflow-bench-"));
const inner = createFsStore({ dir });
const writes = { count: 0 };
const counted: KeelStore = {
  ...inner,
  docs: { ...inner.docs, get: inner.docs.get, list: inner.docs.list, put: (...args) => (writes.count++, inner.docs.put(...args)), delete: (...args) => (writes.count++, inner.docs.delete(...args)) },
  logs: { ...inner.logs, read: inner.logs.read, head: inner.logs.head, list: inner.logs.list, append: (...args) => (writes.count++, inner.logs.append(...args)), delete: (...args) => (writes.count++, inner.logs.delete(...args)) },
  leases: { ...inner.leases, current: inner.leases.current, acquire: (...args) => (writes.count++, inner.leases.acquire(...args)), renew: (...args) => (writes.count++, inner.leases.renew(...args)), release: (...args) => (writes.count++, inner.leases.release(...args)) },
  check: (options) => inner.check(options),
  close: () => inner.close(),
};

const executeStage: ExecuteStage = async (call) => ok({ text: `${call.stage}: nothing to report`, tokens: 10, durationMs: 1 });
const oneStage = { schemaVersion: 1, id: "one_stage", version: "1.0.0", description: "one local stage", kind: "review", reviseFrom: "look", stages: [{ id: "look", kind: "local", role: "explorer", skills: ["explore"] }, { id: "done", kind: "checkpoint", final: true }] };
const fifty = {
  schemaVersion: 1,
  id: "fifty_stages",
  version: "1.0.0",
  description: "fifty stages",
  kind: "review",
  reviseFrom: "s0",
  stages: [...Array.from({ length: 49 }, (_, index) => ({ id: `s${index}`, kind: "local", role: "explorer", skills: ["explore"] })), { id: "done", kind: "checkpoint", final: true }],
};
const catalog = createCatalog({ workflows: [oneStage, fifty] as never })._unsafeUnwrap();
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

// Durable writes, counted once: start, then one stage's step, then status.
const probe = await startRun();
writes.count = 0;
(await engine.step(probe.runId, { version: probe.version }))._unsafeUnwrap();
const stepWrites = writes.count;
writes.count = 0;
(await engine.status(probe.runId))._unsafeUnwrap();
const statusWrites = writes.count;
const long = await startRun("fifty_stages");
writes.count = 0;
(await engine.step(long.runId, { version: long.version }))._unsafeUnwrap();
const fiftyWrites = writes.count;
console.log(
  `workflow durable writes: one-stage step ${stepWrites} (status ${statusWrites}); ` +
    `a 49-stage step ${fiftyWrites} = ${((fiftyWrites - 3) / 49).toFixed(2)} per stage + 3 per step`,
);

// A pool of started runs, so that each timed iteration steps a fresh one.
const pool: { runId: string; version: number }[] = [];
for (let index = 0; index < 160; index++) pool.push(await startRun());
let put = 0;

afterAll(async () => {
  await inner.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("workflow: one stage's bookkeeping on the fs store", () => {
  bench(
    "step + status (one stage: lease, reserve, journal, settle, run write)",
    async () => {
      const run = pool.pop();
      if (!run) return;
      (await engine.step(run.runId, { version: run.version }))._unsafeUnwrap();
      (await engine.status(run.runId))._unsafeUnwrap();
    },
    { iterations: 150, time: 0, warmupIterations: 5 },
  );
  bench("one durable put (fs store)", async () => {
    (await inner.docs.put(["bench", `p${put++ % 50}`], { value: put }, { unconditional: true }))._unsafeUnwrap();
  }, { iterations: 150, time: 0, warmupIterations: 5 });
});

describe("workflow: status of a 50-stage run", () => {
  bench("status (50 stages, fs store)", async () => {
    (await engine.status(long.runId))._unsafeUnwrap();
  }, { time: 1_000 });
  bench("one durable put (fs store)", async () => {
    (await inner.docs.put(["bench", `q${put++ % 50}`], { value: put }, { unconditional: true }))._unsafeUnwrap();
  }, { time: 1_000 });
});
