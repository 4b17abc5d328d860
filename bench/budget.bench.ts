import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createBudget, type BudgetScope } from "@keel/budget";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { afterAll, bench, describe } from "vitest";

/** A task scope under a workflow and a global scope, with limits far above what the bench uses. */
function taskScope(store: Pick<KeelStore, "docs"> & Partial<Pick<KeelStore, "logs">>, keyPrefix = ["budget"]): BudgetScope {
  const budget = createBudget({ store, keyPrefix });
  const global = budget.scope("global", { limits: { tokens: Number.MAX_SAFE_INTEGER, calls: Number.MAX_SAFE_INTEGER } });
  const workflow = budget.scope("workflow", { limits: { costMicroUsd: Number.MAX_SAFE_INTEGER }, parents: [global] });
  return budget.scope("task", { limits: { timeMs: Number.MAX_SAFE_INTEGER }, parents: [workflow] });
}

async function reserveAndSettle(scope: BudgetScope): Promise<void> {
  const reservation = (await scope.reserve({ tokens: 2_000, calls: 1, timeMs: 30_000 }))._unsafeUnwrap();
  (await reservation.settle({ tokens: 1_500, timeMs: 12_000 }))._unsafeUnwrap();
}

const memoryStore = createMemoryStore();
const memoryScope = taskScope(memoryStore);
// The old path: a store without logs closes by rewriting the ledger document (two CAS writes a pair).
const memoryDocsOnly = createMemoryStore();
const memoryDocsOnlyScope = taskScope({ docs: memoryDocsOnly.docs });
const dir = mkdtempSync(path.join(tmpdir(), "keel-budget-bench-"));
const fsStore = createFsStore({ dir });
const fsScope = taskScope(fsStore);
const fsDocsOnlyScope = taskScope({ docs: fsStore.docs }, ["budget-docs-only"]);
let putCount = 0;

async function durablePut(store: KeelStore): Promise<void> {
  putCount += 1;
  (await store.docs.put(["bench-put", String(putCount % 64)], { n: putCount }, { unconditional: true }))._unsafeUnwrap();
}

/**
 * Medians of single calls, interleaved (put, close-log pair, document-only pair, put, …) so a
 * noisy machine favours none; and the CPU time of each pair on the memory store.
 */
async function interleaved(): Promise<void> {
  const median = (values: number[]) => [...values].sort((left, right) => left - right)[values.length >> 1]!;
  const rows: string[] = [];
  for (const [name, store, logScope, docsScope, rounds] of [
    ["memory", memoryStore, memoryScope, memoryDocsOnlyScope, 2_000],
    ["fs", fsStore, fsScope, fsDocsOnlyScope, 300],
  ] as const) {
    const tasks = [
      { label: "one durable put (comparison)", run: () => durablePut(store) },
      { label: "reserve + settle, close log (new)", run: () => reserveAndSettle(logScope) },
      { label: "reserve + settle, document only (old)", run: () => reserveAndSettle(docsScope) },
    ];
    const samples = new Map(tasks.map((task) => [task, [] as number[]]));
    const cpu = new Map(tasks.map((task) => [task, 0]));
    for (let round = 0; round < rounds; round++) {
      for (const task of tasks) {
        const started = performance.now();
        const cpuStarted = process.cpuUsage();
        await task.run();
        const used = process.cpuUsage(cpuStarted);
        samples.get(task)!.push(performance.now() - started);
        cpu.set(task, cpu.get(task)! + (used.user + used.system) / 1000);
      }
    }
    const floor = median(samples.get(tasks[0]!)!);
    for (const task of tasks) {
      const value = median(samples.get(task)!);
      rows.push(`  ${name.padEnd(6)} | ${task.label.padEnd(38)} | median ${value.toFixed(3)} ms | ${(value / floor).toFixed(2)}× the put | CPU ${(cpu.get(task)! / rounds).toFixed(3)} ms/call`);
    }
  }
  console.log(`[budget bench] medians of single calls, interleaved, after warm-up:\n${rows.join("\n")}`);
}
await interleaved();

/**
 * Durable writes per reserve + settle, counted through a transparent wrapper of the fs store
 * (every `docs.put`/`docs.delete`/`logs.append`/`logs.delete` is one durable write there).
 */
async function durableWritesPerPair(pairs: number): Promise<void> {
  const rows: string[] = [];
  for (const [label, withLogs] of [
    ["close log", true],
    ["document only", false],
  ] as const) {
    let writes = 0;
    const counted = <A extends unknown[], R>(call: (...args: A) => R) => (...args: A): R => ((writes += 1), call(...args));
    const docs = { ...fsStore.docs, put: counted(fsStore.docs.put), delete: counted(fsStore.docs.delete) };
    const logs = { ...fsStore.logs, append: counted(fsStore.logs.append), delete: counted(fsStore.logs.delete) };
    const scope = taskScope(withLogs ? { docs, logs } : { docs }, [`budget-counted-${label.replace(" ", "-")}`]);
    await reserveAndSettle(scope);
    writes = 0;
    for (let pair = 0; pair < pairs; pair++) await reserveAndSettle(scope);
    rows.push(`  fs     | ${label.padEnd(14)} | ${(writes / pairs).toFixed(2)} durable writes per reserve + settle`);
  }
  console.log(`[budget bench] durable writes per reserve + settle (${pairs} pairs, counted at the store):\n${rows.join("\n")}`);
}
await durableWritesPerPair(50);

afterAll(async () => {
  await memoryStore.close();
  await memoryDocsOnly.close();
  await fsStore.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("budget: reserve + settle over a 3-scope chain, memory store", () => {
  bench("close log (one document write + one append)", () => reserveAndSettle(memoryScope), { time: 1_000 });
  bench("document only (old: two document writes)", () => reserveAndSettle(memoryDocsOnlyScope), { time: 1_000 });
});

describe("budget: reserve + settle over a 3-scope chain, fs store", () => {
  bench("close log (one document write + one append)", () => reserveAndSettle(fsScope), { time: 2_000 });
  bench("document only (old: two document writes)", () => reserveAndSettle(fsDocsOnlyScope), { time: 2_000 });
  bench("one durable put (comparison)", () => durablePut(fsStore), { time: 2_000 });
});
