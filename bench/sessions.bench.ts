import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createEventBus } from "@keel/core";
import { createRoleSessions, type Execute, type RoleSessions, type RoleSessionTurnRequest } from "@keel/sessions";
import { createMemoryStore, type Fence, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { okAsync } from "neverthrow";
import { afterAll, bench, describe } from "vitest";

/**
 * The bookkeeping cost of one role turn (plan + capsule update + event) against the floor of one
 * bare durable document put, on the memory store and on the filesystem store. The host's
 * backend call is instant here, so everything measured is Keel's. Targets: at most 2 durable
 * document writes per turn (capsule + checkpoint items) and at most 1.5× the floor. The capsule
 * write is fenced by the role's lease, so a fenced put is measured too; the write counts per
 * turn are printed first, then the fs comparison after a pause (see {@link afterPauses}).
 */

/** Counts the durable writes a store is asked for (document puts and deletes, lease acquire and release). */
function counting(store: KeelStore) {
  const counts = { docWrites: 0, leaseWrites: 0, docReads: 0 };
  const counted: KeelStore = {
    ...store,
    docs: {
      ...store.docs,
      get: (key) => (counts.docReads++, store.docs.get(key)),
      put: (key, value, condition) => (counts.docWrites++, store.docs.put(key, value, condition)),
      delete: (key, condition) => (counts.docWrites++, store.docs.delete(key, condition)),
    },
    leases: {
      ...store.leases,
      acquire: (name, holder, options) => (counts.leaseWrites++, store.leases.acquire(name, holder, options)),
      release: (lease) => (counts.leaseWrites++, store.leases.release(lease)),
    },
  };
  return { store: counted, counts };
}

const request: RoleSessionTurnRequest = { missionId: "bench", role: "engineer", backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };
const plain: Execute = (plan) => okAsync({ text: "ok", threadId: plan.threadId ?? "thread-1", usage: null, promptBytes: 200, decisiveOutput: "done" });
const withItems: Execute = (plan) =>
  okAsync({ text: "ok", threadId: plan.threadId ?? "thread-1", usage: null, promptBytes: 200, decisiveOutput: "done", openCheckpointItems: ["review the parser"] });

function sessionsOn(store: KeelStore, policy: "rolling" | "fresh", lingerMs = 0): RoleSessions {
  // Limits far above the bench's turn count: every measured turn is a resumed one.
  return createRoleSessions({
    store,
    events: createEventBus(),
    policy,
    limits: { maxTurns: 1_000_000, maxInputTokens: Number.MAX_SAFE_INTEGER },
    lease: { lingerMs },
  });
}

const floorVersions = new Map<string, number>();
async function barePut(store: KeelStore, fence?: Fence): Promise<void> {
  const name = `${store === stores.memory ? "memory" : "fs"}-${fence ? "fenced" : "bare"}`;
  const version = floorVersions.get(name) ?? 0;
  const condition = version === 0 ? { create: true as const } : { expectedVersion: version };
  const doc = (await store.docs.put(["bench", name], { counter: version }, fence ? { ...condition, fence } : condition))._unsafeUnwrap();
  floorVersions.set(name, doc.version);
}

const dir = mkdtempSync(path.join(tmpdir(), "keel-sessions-bench-"));
const stores = { memory: createMemoryStore(), fs: createFsStore({ dir }) };

async function writesPerTurn(name: "memory" | "fs", execute: Execute, lingerMs: number): Promise<string> {
  const { store, counts } = counting(stores[name]);
  const sessions = sessionsOn(store, "rolling", lingerMs);
  const turnRequest = { ...request, role: `count-${execute === plain ? "plain" : "items"}-${lingerMs}` };
  (await sessions.runTurn(turnRequest, execute))._unsafeUnwrap();
  Object.assign(counts, { docWrites: 0, leaseWrites: 0, docReads: 0 });
  (await sessions.runTurn(turnRequest, execute))._unsafeUnwrap();
  const counted = `${counts.docWrites} doc writes + ${counts.leaseWrites} lease writes, ${counts.docReads} doc reads`;
  await sessions.close();
  return counted;
}

// Setup runs here, at the top level: a describe callback must register its benches synchronously.
type Prepared = { rolling: RoleSessions; kept: RoleSessions; fresh: RoleSessions; fence: Fence };
const prepared = {} as Record<"memory" | "fs", Prepared>;
for (const name of ["memory", "fs"] as const) {
  const lease = (await stores[name].leases.acquire("bench-floor", "bench", { ttlMs: 600_000 }))._unsafeUnwrap();
  const entry: Prepared = {
    rolling: sessionsOn(stores[name], "rolling"),
    kept: sessionsOn(stores[name], "rolling", 60_000),
    fresh: sessionsOn(stores[name], "fresh"),
    fence: { lease: lease.name, token: lease.token },
  };
  (await entry.rolling.initMissionCheckpoint("bench"))._unsafeUnwrap();
  for (const sessions of [entry.rolling, entry.kept]) {
    const role = sessions === entry.kept ? "kept" : "engineer";
    (await sessions.runTurn({ ...request, role }, plain))._unsafeUnwrap();
    (await sessions.runTurn({ ...request, role: `${role}-items` }, withItems))._unsafeUnwrap();
  }
  prepared[name] = entry;
  for (const lingerMs of [0, 60_000]) {
    const lease = lingerMs === 0 ? "lease taken per turn" : "lease kept between turns";
    console.log(
      `[sessions bench] ${name} store, rolling resumed turn, ${lease}: ${await writesPerTurn(name, plain, lingerMs)}; with checkpoint items: ${await writesPerTurn(name, withItems, lingerMs)}`,
    );
  }
}

/**
 * The same comparison on the fs store as medians of single calls, interleaved (bare put, fenced
 * put, turn, turn, bare put, …), without a pause and after the same pause before each call. In
 * vitest's rows a put follows a put within microseconds, thousands of times: on a VM the disk
 * path and the CPU stay hot then, and any work between two fsyncs (which a turn does) slows the
 * next one; a real turn's bookkeeping follows a backend call of seconds. Medians, because fsync
 * times have long tails that move the means. Last, each turn less the fenced put measured just
 * before it: the turn's own cost in milliseconds, which does not scale with the disk's fsync time
 * as the ratio does. A closing line sets the default turn's ratios against the 1.5× target.
 */
async function afterPauses(): Promise<void> {
  const { rolling, kept, fence } = prepared.fs;
  const floor = { label: "bare durable put (floor)", run: () => barePut(stores.fs) };
  const fenced = { label: "fenced durable put", run: () => barePut(stores.fs, fence) };
  const turn = { label: "runTurn, lease taken per turn (default)", run: async () => void (await rolling.runTurn(request, plain))._unsafeUnwrap() };
  const keptTurn = { label: "runTurn, lease kept between turns", run: async () => void (await kept.runTurn({ ...request, role: "kept" }, plain))._unsafeUnwrap() };
  const tasks = [floor, fenced, turn, keptTurn];
  const median = (values: number[]) => [...values].sort((left, right) => left - right)[values.length >> 1]!;
  const rows: string[] = [];
  const ratios: { when: string; ratio: number }[] = [];
  // A pause of 0: no pause, but still single calls interleaved, so that no put follows a put.
  for (const [pauseMs, rounds] of [[0, 1500], [2, 600], [20, 150]] as const) {
    const samples = new Map(tasks.map((task) => [task, [] as number[]]));
    for (let round = 0; round < rounds; round++) {
      for (const task of tasks) {
        if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        const started = performance.now();
        await task.run();
        samples.get(task)!.push(performance.now() - started);
      }
    }
    const floorMedian = median(samples.get(floor)!);
    const pause = pauseMs === 0 ? "no pause" : `after ${pauseMs} ms`;
    const when = pause.padEnd(11);
    for (const task of tasks) {
      const value = median(samples.get(task)!);
      rows.push(`  ${when} | ${task.label.padEnd(40)} | ${value.toFixed(3)} ms | ${(value / floorMedian).toFixed(2)}× the floor`);
    }
    // The same rounds as differences: each turn less the fenced put measured just before it.
    const fencedSamples = samples.get(fenced)!;
    for (const [task, label] of [[turn, "lease taken per turn"], [keptTurn, "lease kept"]] as const) {
      const overhead = median(samples.get(task)!.map((value, round) => value - fencedSamples[round]!));
      rows.push(`  ${when} | ${`turn less its fenced put (${label})`.padEnd(40)} | ${overhead.toFixed(3)} ms |`);
    }
    ratios.push({ when: pause, ratio: median(samples.get(turn)!) / floorMedian });
  }
  console.log(`[sessions bench] fs store, medians of single calls, interleaved:\n${rows.join("\n")}`);
  const listed = ratios.map(({ when, ratio }) => `${when} ${ratio.toFixed(3)}×`).join(", ");
  const met = ratios.filter(({ ratio }) => ratio <= 1.5).length;
  console.log(`[sessions bench] target: the default turn ≤ 1.5× the floor; interleaved medians: ${listed}: met in ${met} of ${ratios.length}`);
}
await afterPauses();

for (const name of ["memory", "fs"] as const) {
  const store = stores[name];
  const { rolling, kept, fresh, fence } = prepared[name];
  const time = name === "fs" ? 3_000 : 1_000;
  describe(`sessions on the ${name} store: one turn's bookkeeping beside one bare durable put`, () => {
    bench("floor: one bare durable doc put (CAS)", () => barePut(store), { time });
    bench("floor: one fenced durable doc put (CAS + lease check)", () => barePut(store, fence), { time });
    bench("runTurn, rolling (resumed), lease taken per turn (default)", async () => void (await rolling.runTurn(request, plain))._unsafeUnwrap(), { time });
    bench("runTurn, rolling (resumed), lease kept between turns", async () => void (await kept.runTurn({ ...request, role: "kept" }, plain))._unsafeUnwrap(), { time });
    bench(
      "runTurn, rolling (resumed) + checkpoint items, lease kept",
      async () => void (await kept.runTurn({ ...request, role: "kept-items" }, withItems))._unsafeUnwrap(),
      { time },
    );
    bench("runTurn, fresh (no store I/O)", async () => void (await fresh.runTurn(request, plain))._unsafeUnwrap(), { time });
  });
}

afterAll(async () => {
  for (const entry of Object.values(prepared)) await Promise.all([entry.rolling.close(), entry.kept.close(), entry.fresh.close()]);
  await stores.memory.close();
  await stores.fs.close();
  rmSync(dir, { recursive: true, force: true });
});
