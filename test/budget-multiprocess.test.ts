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

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "..");
const workerFile = path.join(here, "support/budget-reserve-worker.ts");

interface WorkerReport {
  worker: string;
  granted: string[];
  refused: { code: string; limitingScope: unknown; dimension: unknown }[];
  failed: { code: string; message: string }[];
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
});
