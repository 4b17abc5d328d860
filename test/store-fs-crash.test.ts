import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { KeelError } from "@keel/core";
import type { KeelStore, LogRecord } from "@keel/store";
import { createFsStore, type FsStoreWarning } from "@keel/store-fs";
import type { Result } from "neverthrow";
import { afterAll, describe, expect, it } from "vitest";
import { bundleWorker, startWorker, type Worker } from "./support/store-fs-child.js";
import { CRASH_DOCS, CRASH_LEASE, CRASH_LOGS, docValue, recordValue } from "./support/store-fs-crash-model.js";

/**
 * Kill -9 a process that writes documents, appends to logs and takes a lease, at random moments,
 * again and again on the same directory; after each kill, reopen the store and check that every
 * acknowledged write is there, no document is torn, unacknowledged writes are all-or-nothing,
 * and the logs read cleanly after check({ repair: true }).
 *
 * KEEL_CRASH_ITERATIONS sets the number of kills (default 200; `.ci/run` runs 1,000), run in
 * KEEL_CRASH_LANES lanes (directories, default 4) side by side: a lane waits on its worker's
 * fsyncs most of the time, so several keep two cores busy. Workers start from one bundle of the
 * worker and the sources (plain `node`, no tsx per worker). Every third worker runs on a slow
 * disk (see the worker), so kills inside a log batch's write happen, and the test requires torn
 * tails to have occurred and been repaired.
 */
const iterations = Number(process.env.KEEL_CRASH_ITERATIONS ?? 200);
const lanes = Number(process.env.KEEL_CRASH_LANES ?? 4);
/**
 * The time allowed (a guard against a hang, not a speed target): 5 s a kill, at least 10 minutes.
 * A kill costs about 0.5 s of wall time on a quiet 2-core machine (a worker's start-up, its first
 * writes, the reopen and check after it); CI's busy machine took more than 600 s for 1,000, and
 * a development VM at load average 15–20 about 4 s a kill (200 kills did not fit in 2 s each).
 */
const timeoutMs = Math.max(600_000, iterations * 5_000);
const workerSource = "test/support/store-fs-crash-worker.ts";
let workerFile = "";
/** The repair of a copy (a full copy of the directory) runs after this many kills, and after every kill that left a torn tail. */
const REPAIR_EVERY = 8;
/** Workers started ahead, per lane (starting a TypeScript child costs far more than a run). */
const PRELOADED = 2;
/** A worker's line that acknowledges a document or log write. */
const ACKNOWLEDGED = /^(DA|LA|XA) /;
/** A worker is killed after 1 to this many acknowledged writes (and a random moment more). */
const MAX_WRITES_BEFORE_KILL = 3;

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The value of a result, or a failure that says what failed and why. */
function unwrap<T>(result: Result<T, KeelError>, what: string): T {
  if (result.isErr()) throw new Error(`${what} failed with ${result.error.code}: ${result.error.message}`);
  return result.value;
}

type DocState = { version: number; n: number | null };
type Pending = { op: "put" | "del"; n: number };
interface LogModel {
  /** Ids read back at the last check (they must stay until an acknowledged delete). */
  present: Set<string>;
  /** Ids acknowledged since. */
  acked: Set<string>;
  /** Batches intended but not acknowledged in the run that was just killed. */
  pending: Map<string, string[]>;
  deletePending: boolean;
  /** Seqs at or below this belonged to a deleted log and are never reused. */
  floor: number;
  maxSeq: number;
}

interface Model {
  docs: Map<string, { state: DocState; pending: Pending | undefined; history: string[] }>;
  logs: Map<string, LogModel>;
  lastToken: number;
}

function newModel(): Model {
  return {
    docs: new Map(CRASH_DOCS.map((name) => [name, { state: { version: 0, n: null }, pending: undefined, history: [] }])),
    logs: new Map(CRASH_LOGS.map((name) => [name, { present: new Set(), acked: new Set(), pending: new Map(), deletePending: false, floor: 0, maxSeq: 0 }])),
    lastToken: 0,
  };
}

/** Replays the worker's intent and acknowledgement lines into the model. */
function apply(model: Model, lines: readonly string[]): void {
  for (const line of lines) {
    const [kind, a, b, c, d] = line.split(" ");
    if (kind === "DT" || kind === "DA") model.docs.get(a!)!.history.push(line);
    if (kind === "DT") model.docs.get(a!)!.pending = { op: c as "put" | "del", n: Number(b) };
    else if (kind === "DA") {
      const doc = model.docs.get(a!)!;
      doc.state = { version: Number(d), n: c === "put" ? Number(b) : null };
      doc.pending = undefined;
    } else if (kind === "LT") {
      model.logs.get(a!)!.pending.set(b!, Array.from({ length: Number(c) }, (_, index) => `${b}.${index}`));
    } else if (kind === "LA") {
      const log = model.logs.get(a!)!;
      for (const id of log.pending.get(b!)!) log.acked.add(id);
      log.pending.delete(b!);
    } else if (kind === "XT") model.logs.get(a!)!.deletePending = true;
    else if (kind === "XA") {
      const log = model.logs.get(a!)!;
      log.present.clear();
      log.acked.clear();
      log.deletePending = false;
      log.floor = log.maxSeq;
    } else if (kind === "SA") {
      expect(Number(a), "lease tokens grow").toBeGreaterThan(model.lastToken);
      model.lastToken = Number(a);
    }
  }
}

async function verifyDocs(store: KeelStore, model: Model): Promise<void> {
  for (const [name, doc] of model.docs) {
    const read = unwrap(await store.docs.get(["crash", name]), `reading ${name}`);
    const { state, pending } = doc;
    const seen = () => `${name} read at v${read?.version}; model v${state.version}; last lines: ${doc.history.slice(-12).join(" | ")}`;
    doc.history.push(`(checked: v${read?.version ?? "none"})`);
    if (!read) {
      if (state.n !== null) {
        expect(pending?.op, `an acknowledged document vanished: ${seen()}`).toBe("del");
        doc.state = { version: state.version + 1, n: null };
      }
    } else if (state.n !== null && read.version === state.version) {
      expect(read.value, seen()).toEqual(docValue(name, state.n));
    } else {
      expect(pending?.op, `neither acknowledged nor intended: ${seen()}`).toBe("put");
      expect(read.version, seen()).toBe(state.version + 1);
      expect(read.value, seen()).toEqual(docValue(name, pending!.n));
      doc.state = { version: read.version, n: pending!.n };
    }
    doc.pending = undefined;
  }
}

function verifyLog(name: string, log: LogModel, records: readonly LogRecord[], live: boolean): void {
  const ids = records.map((record) => record.id);
  records.forEach((record, index) => {
    if (index > 0) expect(record.seq, `${name}: seqs are dense`).toBe(records[index - 1]!.seq + 1);
    expect(record.seq, `${name}: seqs of a deleted log are never reused`).toBeGreaterThan(log.floor);
    expect(record.value, `${name} ${record.id}`).toEqual(recordValue(record.id));
  });
  const observed = new Set(ids);
  expect(observed.size, `${name}: no record twice`).toBe(ids.length);
  const deletedNow = log.deletePending && !live;
  if (!deletedNow) {
    for (const id of [...log.present, ...log.acked]) expect(observed.has(id), `${name}: acknowledged record ${id} is missing`).toBe(true);
  }
  const known = new Set([...log.present, ...log.acked]);
  const intended = new Map<string, string>();
  for (const [batch, batchIds] of log.pending) for (const id of batchIds) intended.set(id, batch);
  for (const id of observed) {
    if (!known.has(id)) expect(intended.has(id), `${name}: record ${id} was never written`).toBe(true);
  }
  for (const [batch, batchIds] of log.pending) {
    const found = batchIds.filter((id) => observed.has(id)).length;
    expect([0, batchIds.length], `${name}: batch ${batch} is all-or-nothing`).toContain(found);
  }
  if (deletedNow) log.floor = Math.max(log.floor, log.maxSeq);
  log.present = observed;
  log.acked = new Set();
  log.pending = new Map();
  log.deletePending = false;
  log.maxSeq = Math.max(log.maxSeq, records.at(-1)?.seq ?? 0);
}

async function readLogs(store: KeelStore): Promise<Map<string, { records: LogRecord[]; live: boolean }>> {
  const out = new Map<string, { records: LogRecord[]; live: boolean }>();
  for (const name of CRASH_LOGS) {
    const head = unwrap(await store.logs.head(["crash", name]), `the head of ${name}`);
    out.set(name, { records: unwrap(await store.logs.read(["crash", name]), `reading ${name}`), live: head !== undefined });
  }
  return out;
}

/** What the kills left behind, over a lane: evidence that the crash points were really hit. */
interface Leftovers {
  tornTails: Set<string>;
  orphans: Set<string>;
  /** Torn tails cut by a worker before its next append (its `truncated-tail` warning is not seen here: counted by check() first). */
  repairedTails: number;
}

async function verifyAfterKill(dir: string, model: Model, lane: number, iteration: number, leftovers: Leftovers): Promise<void> {
  const warnings: FsStoreWarning[] = [];
  const store = createFsStore({ dir, onWarning: (warning) => warnings.push(warning) });
  try {
    await verifyDocs(store, model);
    const logs = await readLogs(store);
    for (const [name, { records, live }] of logs) verifyLog(name, model.logs.get(name)!, records, live);
    const lease = unwrap(await store.leases.current(CRASH_LEASE), "reading the lease");
    if (lease) expect(lease.token).toBeGreaterThanOrEqual(model.lastToken);
    // What a crash may leave: torn log tails, staging files, stale locks. Never a damaged document.
    const report = unwrap(await store.check(), "check()");
    const tornBefore = leftovers.tornTails.size;
    for (const problem of report.problems) (problem.code === "orphan" ? leftovers.orphans : leftovers.tornTails).add(problem.location);
    const torn = leftovers.tornTails.size > tornBefore;
    for (const problem of report.problems) {
      const allowed = problem.code === "orphan" || (problem.code === "corrupt" && /\.jsonl:\d+$/.test(problem.location) && problem.message.startsWith("torn tail"));
      expect(allowed, `${problem.code} at ${problem.location}: ${problem.message}`).toBe(true);
    }
    expect(warnings.filter((warning) => warning.type === "served-backup")).toEqual([]);

    // check({ repair: true }) on a copy makes everything read cleanly; the original is left as the
    // crash left it, so the next worker must cope with torn tails and stale locks by itself.
    if (!torn && iteration % REPAIR_EVERY !== 0) return;
    if (torn) leftovers.repairedTails += 1;
    const copy = path.join(path.dirname(dir), `repair-${lane}-${iteration}`);
    cpSync(dir, copy, { recursive: true, verbatimSymlinks: true });
    const repaired = createFsStore({ dir: copy });
    try {
      const fixed = unwrap(await repaired.check({ repair: true }), "check({ repair: true })");
      expect(fixed.problems).toEqual([]);
      expect(unwrap(await repaired.check(), "check() after repair")).toEqual({ ok: true, repaired: [], problems: [], quarantined: [] });
      const after = await readLogs(repaired);
      for (const [name, { records }] of logs) expect(after.get(name)!.records).toEqual(records);
    } finally {
      await repaired.close();
      rmSync(copy, { recursive: true, force: true });
    }
  } finally {
    await store.close();
  }
}

let stopped = false;

async function runLane(lane: number, count: number): Promise<{ acknowledged: number; leftovers: Leftovers }> {
  const root = mkdtempSync(path.join(tmpdir(), "keel-crash-"));
  made.push(root);
  const dir = path.join(root, "store");
  const model = newModel();
  let acknowledged = 0;
  const leftovers: Leftovers = { tornTails: new Set(), orphans: new Set(), repairedTails: 0 };
  const slow = (iteration: number) => (lane + iteration) % 3 === 0;
  const spawnRun = (iteration: number) =>
    startWorker(workerFile, [dir, `r${lane}-${iteration}`, String(lane * 100_000 + iteration + 1)], { plain: true, env: slow(iteration) ? { KEEL_CRASH_SLOW_WRITES: "1" } : {} });
  // The next workers load their code while the current one runs; each opens the store only on "go".
  const upcoming: Worker[] = [];
  let worker: Worker | undefined;
  try {
    for (let iteration = 0; iteration < count && !stopped; iteration++) {
      while (upcoming.length < Math.min(PRELOADED, count - iteration)) upcoming.push(spawnRun(iteration + upcoming.length));
      worker = upcoming.shift()!;
      const t0 = Date.now();
      await worker.waitFor(/^loaded$/);
      const t1 = Date.now();
      worker.child.stdin!.write("go\n");
      await worker.waitFor(/^ready$/);
      const t2 = Date.now();
      // Killed after a random number of acknowledged writes, then a random moment more: on a slow
      // or loaded machine a worker still writes before it dies (a kill after a fixed time could
      // come before its first write, every time).
      await worker.waitForCount(ACKNOWLEDGED, 1 + Math.floor(Math.random() * MAX_WRITES_BEFORE_KILL));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * (slow(iteration) ? 60 : 20)));
      worker.child.kill("SIGKILL");
      const exit = await worker.exited;
      expect(exit.signal, `worker failed on its own: ${worker.stderr()}`).toBe("SIGKILL");
      acknowledged += worker.lines.filter((line) => ACKNOWLEDGED.test(line)).length;
      apply(model, worker.lines);
      const t3 = Date.now();
      await verifyAfterKill(dir, model, lane, iteration, leftovers);
      if (process.env.KEEL_CRASH_TRACE) console.log(`lane ${lane} kill ${iteration}: loaded ${t1 - t0} ms, ready ${t2 - t1} ms, writes ${t3 - t2} ms, verify ${Date.now() - t3} ms`);
    }
  } catch (error) {
    stopped = true;
    throw error;
  } finally {
    for (const child of [worker, ...upcoming]) child?.child.kill("SIGKILL");
    await Promise.all([worker, ...upcoming].map((child) => child?.exited));
  }
  const store = createFsStore({ dir });
  const final = unwrap(await store.check({ repair: true }), "the final check({ repair: true })");
  await store.close();
  expect(final.ok).toBe(true);
  return { acknowledged, leftovers };
}

describe("@keel/store-fs under SIGKILL", () => {
  it(`keeps every acknowledged write through ${iterations} kills at random moments`, async () => {
    const bundleDirectory = mkdtempSync(path.join(tmpdir(), "keel-crash-bundle-"));
    made.push(bundleDirectory);
    const started = Date.now();
    workerFile = await bundleWorker(workerSource, path.join(bundleDirectory, "store-fs-crash-worker.mjs"));
    const perLane = Math.ceil(iterations / lanes);
    // Every lane ends (and its workers are gone) before the directories are removed.
    const settled = await Promise.allSettled(Array.from({ length: lanes }, (_, lane) => runLane(lane, perLane)));
    for (const outcome of settled) if (outcome.status === "rejected") throw outcome.reason;
    const results = settled.map((outcome) => (outcome as PromiseFulfilledResult<Awaited<ReturnType<typeof runLane>>>).value);
    const acknowledged = results.reduce((sum, result) => sum + result.acknowledged, 0);
    const torn = results.reduce((sum, result) => sum + result.leftovers.tornTails.size, 0);
    const orphans = results.reduce((sum, result) => sum + result.leftovers.orphans.size, 0);
    const repairedTails = results.reduce((sum, result) => sum + result.leftovers.repairedTails, 0);
    console.log(
      `${perLane * lanes} kills in ${lanes} lanes, ${((Date.now() - started) / 1000).toFixed(0)} s: ${acknowledged} acknowledged writes kept; left behind and handled: ${torn} torn log tails (${repairedTails} repaired on a copy, all cut by the next run), ${orphans} staging files or stale locks`,
    );
    // The workers really did write between kills (not a vacuous pass): at least one per kill.
    expect(acknowledged).toBeGreaterThanOrEqual(iterations);
    // Kills did land inside log writes, and every torn tail was repaired (the check above fails otherwise).
    expect(torn).toBeGreaterThan(0);
    expect(repairedTails).toBe(torn);
  }, timeoutMs);
});
