import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createBudget, type BudgetScope } from "@keel/budget";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { afterAll, bench, describe } from "vitest";
import { nodeFsIo, type FsIo } from "../packages/store-fs/src/internal/fs-io.js";
import { openFsStore } from "../packages/store-fs/src/internal/open-fs-store.js";

/** A task scope under a workflow and a global scope, with limits far above what the bench uses. */
function taskScope(store: Pick<KeelStore, "docs"> & Partial<Pick<KeelStore, "logs" | "capabilities">>, keyPrefix = ["budget"]): BudgetScope {
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
// The former close log: the same store without its capabilities, so each close is a durable append.
const fsDurableCloseScope = taskScope({ docs: fsStore.docs, logs: fsStore.logs }, ["budget-durable-close"]);
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
  for (const [name, store, logScope, durableCloseScope, docsScope, rounds] of [
    ["memory", memoryStore, memoryScope, undefined, memoryDocsOnlyScope, 2_000],
    ["fs", fsStore, fsScope, fsDurableCloseScope, fsDocsOnlyScope, 300],
  ] as const) {
    const tasks = [
      { label: "one durable put (comparison)", run: () => durablePut(store) },
      { label: "reserve + settle, close log (new)", run: () => reserveAndSettle(logScope) },
      ...(durableCloseScope ? [{ label: "reserve + settle, durable close (former)", run: () => reserveAndSettle(durableCloseScope) }] : []),
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
    const floorCpu = cpu.get(tasks[0]!)!;
    for (const task of tasks) {
      const value = median(samples.get(task)!);
      const used = cpu.get(task)!;
      rows.push(
        `  ${name.padEnd(6)} | ${task.label.padEnd(41)} | median ${value.toFixed(3)} ms | ${(value / floor).toFixed(2)}× the put | ` +
          `CPU ${(used / rounds).toFixed(3)} ms/call | ${(used / floorCpu).toFixed(2)}× the put's CPU`,
      );
    }
  }
  console.log(`[budget bench] medians of single calls, interleaved, after warm-up:\n${rows.join("\n")}`);
}
await interleaved();

/** The real file system, counting the sync system calls (`fsync`, `fdatasync`) a store makes. */
function syncCountingIo(): FsIo & { syncs: () => number } {
  let syncs = 0;
  return {
    ...nodeFsIo,
    fsync: (fd) => ((syncs += 1), nodeFsIo.fsync(fd)),
    fdatasync: (fd) => ((syncs += 1), nodeFsIo.fdatasync(fd)),
    syncs: () => syncs,
  };
}

/**
 * Durable writes per reserve + settle on the fs store, counted two ways: at the store's API (a
 * document write, or an append not asked to be buffered, is acknowledged only after its sync)
 * and as the sync system calls the store makes (counted in its file-system layer; a document
 * write is two: the file, then its directory after the rename). The syscalls include the
 * background sync of buffered appends: the store is closed (which syncs what is pending) inside
 * the count.
 */
async function durableWritesPerPair(pairs: number): Promise<void> {
  const rows: string[] = [];
  for (const [label, mode] of [
    ["close log, buffered close (new)", "buffered"],
    ["close log, durable close (former)", "durable"],
    ["document only (old)", "docs"],
  ] as const) {
    const countDir = mkdtempSync(path.join(tmpdir(), "keel-budget-count-"));
    const io = syncCountingIo();
    const store = openFsStore({ dir: countDir }, io);
    let durable = 0;
    let writes = 0;
    const counted = <A extends unknown[], R>(call: (...args: A) => R, isDurable: (...args: A) => boolean) => (...args: A): R => {
      writes += 1;
      if (isDurable(...args)) durable += 1;
      return call(...args);
    };
    const docs = { ...store.docs, put: counted(store.docs.put, () => true), delete: counted(store.docs.delete, () => true) };
    const logs = {
      ...store.logs,
      append: counted(store.logs.append, (_log, _records, options) => options?.durable !== false),
      delete: counted(store.logs.delete, () => true),
    };
    const scope = taskScope(mode === "docs" ? { docs } : mode === "durable" ? { docs, logs } : { docs, logs, capabilities: store.capabilities });
    // Warm-up: the ledger document and the close log exist before counting.
    await reserveAndSettle(scope);
    await reserveAndSettle(scope);
    writes = 0;
    durable = 0;
    const syncsBefore = io.syncs();
    for (let pair = 0; pair < pairs; pair++) await reserveAndSettle(scope);
    await store.close();
    const syscalls = io.syncs() - syncsBefore;
    rmSync(countDir, { recursive: true, force: true });
    rows.push(
      `  fs     | ${label.padEnd(34)} | ${(writes / pairs).toFixed(2)} store writes | ${(durable / pairs).toFixed(2)} durable writes | ${(syscalls / pairs).toFixed(2)} fsync/fdatasync calls per reserve + settle`,
    );
  }
  console.log(`[budget bench] durable writes per reserve + settle (${pairs} pairs, counted at the store and at its file system):\n${rows.join("\n")}`);
}
await durableWritesPerPair(200);

afterAll(async () => {
  await memoryStore.close();
  await memoryDocsOnly.close();
  await fsStore.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("budget: reserve + settle over a 3-scope chain, memory store", () => {
  bench("close log (one document write + one append; memory has no buffered appends)", () => reserveAndSettle(memoryScope), { time: 1_000 });
  bench("document only (old: two document writes)", () => reserveAndSettle(memoryDocsOnlyScope), { time: 1_000 });
});

describe("budget: reserve + settle over a 3-scope chain, fs store", () => {
  bench("close log, buffered close (one durable write)", () => reserveAndSettle(fsScope), { time: 2_000 });
  bench("close log, durable close (former: a document write + a durable append)", () => reserveAndSettle(fsDurableCloseScope), { time: 2_000 });
  bench("document only (old: two document writes)", () => reserveAndSettle(fsDocsOnlyScope), { time: 2_000 });
  bench("one durable put (comparison)", () => durablePut(fsStore), { time: 2_000 });
});
