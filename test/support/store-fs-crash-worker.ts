/**
 * Crash worker: writes documents, appends to logs and takes a lease, as fast as it can, until it
 * is killed. It prints an intent line before each write and an acknowledgement line only after
 * the write resolved (stdout to a pipe is synchronous on Linux, so a printed line was sent).
 *
 *   DT <doc> <n> put|del          DA <doc> <n> put|del <version>
 *   LT <log> <batch> <count>      LA <log> <batch> <lastSeq>
 *   XT <log>                      XA <log>
 *   SA <token>                    SR <token>
 *
 * It prints `loaded` once its code is loaded and waits for a line on stdin before it opens the
 * store, so that the test can start the next worker while the current one runs.
 *
 * Usage: store-fs-crash-worker.ts <dir> <run id> <seed>
 */
import { writeSync } from "node:fs";
import { createFsStore } from "@keel/store-fs";
import { nodeFsIo, type FsIo } from "../../packages/store-fs/src/internal/fs-io.js";
import { openFsStore } from "../../packages/store-fs/src/internal/open-fs-store.js";
import { CRASH_DOCS, CRASH_LEASE, CRASH_LOG_LIMIT, CRASH_LOGS, docValue, hash, recordValue } from "./store-fs-crash-model.js";
import { sayBlocking } from "./say-blocking.js";

const [dir, runArgument, seedText] = process.argv.slice(2);
if (!dir || !runArgument || !seedText) throw new Error("usage: store-fs-crash-worker.ts <dir> <run id> <seed>");
const runId: string = runArgument;
let seed = Number(seedText) >>> 0 || 1;
const random = () => {
  seed = hash(String(seed));
  return seed / 0x1_0000_0000;
};
const say = sayBlocking;
const fail = (what: string, error: unknown): never => {
  process.stderr.write(`FAIL ${what}: ${JSON.stringify(error)}\n`);
  process.exit(2);
};

say("loaded");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();
/**
 * `KEEL_CRASH_SLOW_WRITES=1`: a disk that takes its time with big writes (at most 4 KiB per
 * `write`, a millisecond between them for writes over 16 KiB), so that a kill lands inside a log
 * batch's write often and leaves a torn tail, which the next run and check() must repair. The
 * bytes and their order are the real ones; only the window is wider.
 */
const pause = new Int32Array(new SharedArrayBuffer(4));
const slowIo: FsIo = {
  ...nodeFsIo,
  writeSync: (fd, buffer, offset, length, position) => {
    if (length > 16 * 1024) Atomics.wait(pause, 0, 0, 1);
    return nodeFsIo.writeSync(fd, buffer, offset, Math.min(length, 4096), position);
  },
};
const store = process.env.KEEL_CRASH_SLOW_WRITES === "1" ? openFsStore({ dir, lockWaitMs: 60_000 }, slowIo) : createFsStore({ dir, lockWaitMs: 60_000 });

async function docWorker(name: string): Promise<never> {
  const key = ["crash", name];
  const initial = await store.docs.get(key);
  if (initial.isErr()) fail(`get ${name}`, initial.error);
  let current = initial._unsafeUnwrap();
  let n = current ? (current.value as { n: number }).n : Date.now();
  for (;;) {
    if (current && random() < 0.15) {
      say(`DT ${name} ${n} del`);
      const deleted = await store.docs.delete(key, { expectedVersion: current.version });
      if (deleted.isErr()) fail(`delete ${name}`, deleted.error);
      say(`DA ${name} ${n} del ${current.version + 1}`);
      current = undefined;
      continue;
    }
    n += 1;
    say(`DT ${name} ${n} put`);
    const put = await store.docs.put(key, docValue(name, n), current ? { expectedVersion: current.version } : { create: true });
    if (put.isErr()) fail(`put ${name}`, put.error);
    current = put._unsafeUnwrap();
    say(`DA ${name} ${n} put ${current.version}`);
  }
}

let batches = 0;
async function logWorker(name: string): Promise<never> {
  const key = ["crash", name];
  for (;;) {
    // Checked before each round, the first too: a worker is often killed within its first
    // round, and the log must not grow from worker to worker without bound.
    const [first] = (await store.logs.read(key, { limit: 1 })).match((records) => records, (error) => fail(`read ${name}`, error));
    const head = (await store.logs.head(key)).match((found) => found, (error) => fail(`head ${name}`, error));
    if (first && head && head.lastSeq - first.seq + 1 > CRASH_LOG_LIMIT) {
      say(`XT ${name}`);
      const deleted = await store.logs.delete(key);
      if (deleted.isErr()) fail(`delete log ${name}`, deleted.error);
      say(`XA ${name}`);
    }
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const batch = `${runId}.${name}.${batches++}`;
        const count = 1 + Math.floor(random() * 12);
        say(`LT ${name} ${batch} ${count}`);
        const records = Array.from({ length: count }, (_, index) => ({ id: `${batch}.${index}`, value: recordValue(`${batch}.${index}`) }));
        const appended = await store.logs.append(key, records);
        if (appended.isErr()) fail(`append ${name}`, appended.error);
        say(`LA ${name} ${batch} ${appended._unsafeUnwrap().lastSeq}`);
      }),
    );
  }
}

async function leaseWorker(): Promise<never> {
  for (;;) {
    const lease = await store.leases.acquire(CRASH_LEASE, runId, { ttlMs: 300, waitMs: 5_000 });
    if (lease.isErr()) fail("acquire", lease.error);
    const held = lease._unsafeUnwrap();
    say(`SA ${held.token}`);
    await new Promise((resolve) => setTimeout(resolve, random() * 10));
    const released = await store.leases.release(held);
    if (released.isErr()) fail("release", released.error);
    say(`SR ${held.token}`);
  }
}

say("ready");
await Promise.all([...CRASH_DOCS.map(docWorker), ...CRASH_LOGS.map(logWorker), leaseWorker()]);
