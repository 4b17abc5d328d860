import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createBudget } from "@keel/budget";
import { createFsStore } from "@keel/store-fs";
import { createPostgresStore } from "@keel/store-postgres";
import { afterEach, describe, expect, it } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";
import { bundleWorker, startWorker } from "./support/store-fs-child.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "..");
const workerFile = path.join(here, "support/budget-reserve-worker.ts");

interface WorkerReport {
  worker: string;
  granted: string[];
  refused: { code: string; limitingScope: unknown; dimension: unknown }[];
  failed: { code: string; message: string }[];
  slowestMs: number;
}

/** Runs one worker process to its end and parses its report. */
function runWorker(args: string[]): Promise<WorkerReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@keel/source", workerFile, ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`worker ${args.join(" ")} exited with ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split("\n").pop()!) as WorkerReport);
    });
  });
}

/**
 * Runs `count` workers (a bundle of the worker: 32 tsx start-ups would take longer than the
 * work) that connect, print `ready` and wait; starts them all at once, so that they contend from
 * the first reservation on, and parses their reports.
 */
async function runTogether(bundle: string, args: (worker: string) => string[], count: number): Promise<WorkerReport[]> {
  const workers = Array.from({ length: count }, (_, index) => startWorker(bundle, [...args(String(index + 1)), "wait"], { plain: true }));
  try {
    await Promise.all(workers.map((worker) => worker.waitFor(/^ready$/)));
    for (const worker of workers) worker.child.stdin!.write("go\n");
    const exits = await Promise.all(workers.map((worker) => worker.exited));
    workers.forEach((worker, index) => expect(exits[index]!.code, worker.stderr()).toBe(0));
    return workers.map((worker) => JSON.parse(worker.lines.at(-1)!) as WorkerReport);
  } finally {
    for (const worker of workers) worker.child.kill("SIGKILL");
  }
}

describe("budget shared by real processes on the filesystem store", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("4 processes × 100 reservations against one scope never together exceed its limit, and every refusal names the scope", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "keel-budget-mp-"));
    const limit = 250;
    const reports = await Promise.all(["1", "2", "3", "4"].map((worker) => runWorker([dir!, String(limit), "100", worker])));
    for (const report of reports) expect(report.failed).toEqual([]);
    const granted = reports.flatMap((report) => report.granted);
    const refused = reports.flatMap((report) => report.refused);
    expect(new Set(granted).size).toBe(granted.length);
    expect(granted.length).toBeLessThanOrEqual(limit);
    // Refusals happen only at the limit, so the whole limit is granted and nothing more.
    expect(granted.length).toBe(limit);
    expect(refused.length).toBe(400 - limit);
    for (const refusal of refused) expect(refusal).toEqual({ code: "budget_exceeded", limitingScope: "shared", dimension: "calls" });

    const store = createFsStore({ dir });
    const snapshot = (await createBudget({ store }).scope("shared", { limits: { calls: limit, tokens: limit * 100 } }).snapshot())._unsafeUnwrap();
    await store.close();
    const settledCount = reports.reduce((sum, report) => sum + Math.floor(report.granted.length / 2), 0);
    expect(snapshot.reserved.calls + snapshot.settled.calls).toBe(limit);
    expect(snapshot.settled.calls).toBe(settledCount);
    expect(snapshot.openReservations).toBe(limit - settledCount);
    expect(snapshot.settled.tokens).toBe(settledCount * 10);
    expect(snapshot.remaining.calls).toBe(0);
  }, 180_000);
});

describeWithPostgres("budget shared by real processes on the PostgreSQL store", () => {
  let schema: string | undefined;
  afterEach(async () => {
    if (schema) await dropSchema(schema);
  });

  it("8 processes × 40 reservations on one scope, through locked updates: no lost update, no overspend", async () => {
    schema = freshSchemaName();
    const store = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 2 });
    expect(store.capabilities.lockedUpdates).toBe(true);
    // The schema exists before the workers race to migrate it.
    (await store.migrate())._unsafeUnwrap();
    const limit = 250;
    const workers = ["1", "2", "3", "4", "5", "6", "7", "8"];
    const reports = await Promise.all(workers.map((worker) => runWorker([`postgres:${schema!}`, String(limit), "40", worker])));
    for (const report of reports) expect(report.failed).toEqual([]);
    const granted = reports.flatMap((report) => report.granted);
    const refused = reports.flatMap((report) => report.refused);
    expect(new Set(granted).size).toBe(granted.length);
    // No overspend, and no lost update: refusals come only at the limit, so exactly the limit is granted.
    expect(granted.length).toBe(limit);
    expect(refused.length).toBe(workers.length * 40 - limit);
    for (const refusal of refused) expect(refusal).toEqual({ code: "budget_exceeded", limitingScope: "shared", dimension: "calls" });

    const snapshot = (await createBudget({ store }).scope("shared", { limits: { calls: limit, tokens: limit * 100 } }).snapshot())._unsafeUnwrap();
    const settledCount = reports.reduce((sum, report) => sum + Math.floor(report.granted.length / 2), 0);
    expect(snapshot.reserved.calls + snapshot.settled.calls).toBe(limit);
    expect(snapshot.settled.calls).toBe(settledCount);
    expect(snapshot.openReservations).toBe(limit - settledCount);
    expect(snapshot.settled.tokens).toBe(settledCount * 10);
    expect(snapshot.reserved.tokens).toBe((limit - settledCount) * 10);
    expect(snapshot.remaining.calls).toBe(0);
    // Every reservation granted is in the ledger: open, or closed with its settle.
    const open = (await createBudget({ store }).scope("shared", { limits: { calls: limit, tokens: limit * 100 } }).openReservations())._unsafeUnwrap();
    expect(open).toHaveLength(limit - settledCount);
    await store.close();
  }, 240_000);

  it("32 processes × 10 reservations on one scope at the default settings: every outcome granted or budget_exceeded, no conflict reaches a caller, totals exact", async () => {
    schema = freshSchemaName();
    const store = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 2 });
    (await store.migrate())._unsafeUnwrap();
    const bundleDirectory = await mkdtemp(path.join(tmpdir(), "keel-budget-32-"));
    try {
      const bundle = await bundleWorker("test/support/budget-reserve-worker.ts", path.join(bundleDirectory, "budget-reserve-worker.mjs"));
      const limit = 250;
      const hosts = 32;
      const asks = 10;
      const started = performance.now();
      const reports = await runTogether(bundle, (worker) => [`postgres:${schema!}`, String(limit), String(asks), worker], hosts);
      const slowest = Math.max(...reports.map((report) => report.slowestMs));
      const failures = reports.flatMap((report) => report.failed.map((failure) => failure.code));
      console.log(
        `[budget 32 hosts] ${hosts} processes × ${asks} reservations (every other one settled) on one PostgreSQL scope: ${((performance.now() - started) / 1000).toFixed(1)} s, slowest reserve ${slowest} ms, failures ${JSON.stringify(failures)}`,
      );
      // No reserve and no settle failed otherwise than by the limit: no conflict, no unavailable.
      for (const report of reports) expect(report.failed).toEqual([]);
      const granted = reports.flatMap((report) => report.granted);
      const refused = reports.flatMap((report) => report.refused);
      expect(new Set(granted).size).toBe(granted.length);
      expect(granted.length).toBe(limit);
      expect(refused.length).toBe(hosts * asks - limit);
      for (const refusal of refused) expect(refusal).toEqual({ code: "budget_exceeded", limitingScope: "shared", dimension: "calls" });
      const scope = createBudget({ store }).scope("shared", { limits: { calls: limit, tokens: limit * 100 } });
      const snapshot = (await scope.snapshot())._unsafeUnwrap();
      const settledCount = reports.reduce((sum, report) => sum + Math.floor(report.granted.length / 2), 0);
      expect(snapshot.settled.calls).toBe(settledCount);
      expect(snapshot.reserved.calls).toBe(limit - settledCount);
      expect(snapshot.settled.tokens).toBe(settledCount * 10);
      expect(snapshot.remaining.calls).toBe(0);
      expect((await scope.openReservations())._unsafeUnwrap()).toHaveLength(limit - settledCount);
    } finally {
      await store.close();
      await rm(bundleDirectory, { recursive: true, force: true });
    }
  }, 300_000);
});
