/**
 * Many hosts on one budget: N worker processes (default 8) reserve + settle pairs on one
 * PostgreSQL budget scope for a fixed time, all started together, through the ledger's
 * compare-and-swap loop (the store with `docs.update` hidden: the path before locked updates)
 * and through the store's locked update (`SELECT … FOR UPDATE`, capability `lockedUpdates`),
 * interleaved, three runs. Printed: pairs per second in total, failures given up on (by code),
 * the slowest reserve, and the check that nothing was lost (every pair's reservation settled in
 * the ledger) and nothing overspent.
 *
 * - `KEEL_BENCH_BUDGET_HOSTS=1,8,32`: the host counts to run (the scaling curve), default `8`;
 * - `KEEL_BENCH_BUDGET_MODES=postgres`: only the locked update (`postgres-cas` only the
 *   compare-and-swap loop), default both.
 *
 * Run alone: `pnpm vitest bench --run --project bench bench/budget-postgres.bench.ts`
 * (needs the PostgreSQL test server, as the tests do).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createBudget } from "@keel/budget";
import { createPostgresStore } from "@keel/store-postgres";
import { bench, describe } from "vitest";
import { dropSchema, freshSchemaName, probeTestPostgres, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";
import { bundleWorker } from "../test/support/store-fs-child.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "..");
const HOSTS = (process.env["KEEL_BENCH_BUDGET_HOSTS"] ?? "8").split(",").map(Number);
type Mode = "postgres-cas" | "postgres";
const MODES = (process.env["KEEL_BENCH_BUDGET_MODES"] ?? "postgres-cas,postgres").split(",") as Mode[];
const DURATION_MS = 5_000;
const RUNS = 3;
const LIMIT = 1_000_000_000;

interface TimedReport {
  granted: string[];
  failed: { code: string; message: string }[];
  slowestMs: number;
  pairs: number;
  seconds: number;
}

/** Where the worker is bundled (once: a bundle starts in a fraction of tsx's time, so 32 hosts start quickly). */
const bundleDirectory = mkdtempSync(path.join(tmpdir(), "keel-budget-bench-"));
let workerFile = "";

/** Starts a worker in timed mode; resolves once it is connected and waiting for the start. */
function startWorker(store: string, worker: number): Promise<{ child: ChildProcessWithoutNullStreams; done: Promise<TimedReport> }> {
  const child = spawn(process.execPath, [workerFile, store, String(LIMIT), `for:${DURATION_MS}`, String(worker)], {
    cwd: repoRoot,
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolveReady, rejectReady) => {
    const done = new Promise<TimedReport>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code) => {
        if (code !== 0) reject(new Error(`worker ${worker} exited with ${code}: ${stderr}`));
        else resolve(JSON.parse(stdout.trim().split("\n").pop()!) as TimedReport);
      });
    });
    done.catch(rejectReady);
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.startsWith("ready\n")) {
        stdout = stdout.slice("ready\n".length);
        resolveReady({ child, done });
      }
    });
  });
}

/** One timed run of `hosts` processes on a fresh schema; the ledger is checked afterwards. */
async function run(mode: Mode, hosts: number): Promise<{ perSecond: number; failed: string[]; slowestMs: number; lost: number; open: number }> {
  const schema = freshSchemaName();
  const store = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 2 });
  (await store.migrate())._unsafeUnwrap();
  try {
    const workers = await Promise.all(Array.from({ length: hosts }, (_, index) => startWorker(`${mode}:${schema}`, index + 1)));
    for (const { child } of workers) child.stdin.write("go\n");
    const reports = await Promise.all(workers.map(({ done }) => done));
    const pairs = reports.reduce((sum, report) => sum + report.pairs, 0);
    const seconds = Math.max(...reports.map((report) => report.seconds));
    const failed = reports.flatMap((report) => report.failed.map((failure) => failure.code));
    const snapshot = (await createBudget({ store }).scope("shared", { limits: { calls: LIMIT, tokens: LIMIT * 100 } }).snapshot())._unsafeUnwrap();
    // Every granted reservation is in the ledger (a lost update would drop one), settled unless its settle failed.
    const lost = pairs - (snapshot.reserved.calls + snapshot.settled.calls);
    return { perSecond: pairs / seconds, failed, slowestMs: Math.max(...reports.map((report) => report.slowestMs)), lost, open: snapshot.openReservations };
  } finally {
    await store.close();
    await dropSchema(schema);
  }
}

const unreachable = await probeTestPostgres();
if (unreachable) {
  console.warn(`[budget-postgres bench] skipped: no PostgreSQL (${unreachable})`);
} else {
  workerFile = await bundleWorker("test/support/budget-reserve-worker.ts", path.join(bundleDirectory, "budget-reserve-worker.mjs"));
  const rows: string[] = [];
  const figures = new Map<string, number[]>();
  const label = (mode: Mode, hosts: number) => `${String(hosts).padStart(2)} hosts, ${mode === "postgres" ? "locked update" : "compare-and-swap"}`;
  for (let index = 0; index < RUNS; index++) {
    for (const hosts of HOSTS) {
      // Interleaved, the order alternating, so that a noisy machine favours neither.
      const order = index % 2 === 0 ? MODES : [...MODES].reverse();
      for (const mode of order) {
        const outcome = await run(mode, hosts);
        const key = label(mode, hosts);
        figures.set(key, [...(figures.get(key) ?? []), outcome.perSecond]);
        rows.push(
          `  run ${index + 1} | ${key.padEnd(30)} | ${outcome.perSecond.toFixed(1).padStart(6)} pairs/s | slowest reserve ${String(outcome.slowestMs).padStart(5)} ms | gave up ${JSON.stringify(outcome.failed)} | ${outcome.lost} lost | ${outcome.open} left open`,
        );
      }
    }
  }
  const range = (values: number[]) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
  console.log(
    `[budget-postgres bench] ${HOSTS.join(", ")} processes × ${DURATION_MS / 1000} s of reserve + settle on one PostgreSQL scope:\n${rows.join("\n")}\n` +
      [...figures].map(([key, values]) => `  range: ${key}: ${range(values)} pairs/s`).join("\n"),
  );
}
rmSync(bundleDirectory, { recursive: true, force: true });

describe("budget: one PostgreSQL scope shared by many processes", () => {
  // The figures are printed above (whole processes, timed by themselves); this keeps the file a bench.
  bench("printed above: pairs per second, compare-and-swap vs locked update", () => undefined, { iterations: 1, time: 0 });
});
