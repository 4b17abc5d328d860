import fs, { mkdtempSync, rmSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createFsStore } from "@keel/store-fs";
import { afterAll, bench, describe } from "vitest";

/**
 * The filesystem store against the floors of durable writing on this disk, side by side in one
 * run (fsync timings swing ±30–50% between runs: compare within a run, and take the median of
 * several runs).
 *
 * Doc put: every row writes the same 1 KiB JSON document durably to the same path.
 * Log append: every iteration appends 64 records of ~200 bytes, so rows compare directly.
 * Lease: one acquire + release (what a role turn pays with the default lingerMs 0) beside the two
 * durable writes it used to be and one durable doc put.
 */

const writeFileAtomic = createRequire(import.meta.url)("write-file-atomic") as (file: string, data: string | Buffer) => Promise<void>;
const fsync = promisify(fs.fsync);
const fdatasync = promisify(fs.fdatasync);

const root = mkdtempSync(path.join(tmpdir(), "keel-fs-bench-"));
const document = { objective: "ship the storage layer", notes: "n".repeat(900), turn: 0 };
const documentBytes = Buffer.from(JSON.stringify(document));
const record = (index: number) => ({ index, text: "r".repeat(180) });
const recordLine = Buffer.from(`${JSON.stringify(record(0))}\n`);

const store = createFsStore({ dir: path.join(root, "store") });
let version = 0;
let leaseScaleVersion = 0;
let nextId = 0;

afterAll(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

let counter = 0;
async function tmpFsyncRenameDirFsync(target: string, bytes: Buffer): Promise<void> {
  const staging = `${target}.${process.pid}.${counter++}.tmp`;
  const handle = await open(staging, "wx");
  await handle.write(bytes);
  await handle.sync();
  await handle.close();
  await rename(staging, target);
  const directory = await open(path.dirname(target), "r");
  await directory.sync();
  await directory.close();
}

/** The same floor with synchronous metadata calls (as the store makes them) and an asynchronous fsync. */
async function tmpFsyncRenameDirFsyncSyncMetadata(target: string, bytes: Buffer): Promise<void> {
  const staging = `${target}.${process.pid}.${counter++}.tmp`;
  const fd = fs.openSync(staging, "wx");
  fs.writeSync(fd, bytes);
  await fsync(fd);
  fs.closeSync(fd);
  fs.renameSync(staging, target);
  const directory = fs.openSync(path.dirname(target), "r");
  await fsync(directory);
  fs.closeSync(directory);
}

describe("doc put: 1 KiB JSON, durable", () => {
  const options = { time: 3_000, warmupTime: 300 };
  bench(
    "bare writeFile + fsync (not atomic: the floor)",
    async () => {
      const handle = await open(path.join(root, "bare.json"), "w");
      await handle.write(documentBytes);
      await handle.sync();
      await handle.close();
    },
    options,
  );
  bench("tmp + fsync + rename + dir fsync (atomic floor)", () => tmpFsyncRenameDirFsync(path.join(root, "floor.json"), documentBytes), options);
  bench(
    "tmp + fsync + rename + dir fsync, sync metadata calls",
    () => tmpFsyncRenameDirFsyncSyncMetadata(path.join(root, "floor-sync.json"), documentBytes),
    options,
  );
  bench("write-file-atomic (no dir fsync)", () => writeFileAtomic(path.join(root, "atomic.json"), documentBytes), options);
  bench(
    "@keel/store-fs docs.put (CAS + lock + .bak)",
    async () => {
      const result = await store.docs.put(["bench", "doc"], { ...document, turn: version }, version === 0 ? { create: true } : { expectedVersion: version });
      version = result._unsafeUnwrap().version;
    },
    options,
  );
});

describe("log append: 64 records of ~200 bytes per iteration", () => {
  const options = { time: 3_000, warmupTime: 300 };
  const appendOne = async (log: string) => {
    const id = String(nextId++);
    (await store.logs.append(["bench", log], [{ id, value: record(nextId) }]))._unsafeUnwrap();
  };
  const appenders = async (log: string, concurrency: number) => {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let index = 0; index < 64 / concurrency; index++) await appendOne(log);
      }),
    );
  };
  bench(
    "one write + fdatasync per append (baseline)",
    async () => {
      const handle = await open(path.join(root, "baseline.jsonl"), "a");
      try {
        for (let index = 0; index < 64; index++) {
          await handle.write(recordLine);
          await fdatasync(handle.fd);
        }
      } finally {
        await handle.close();
      }
    },
    options,
  );
  bench("@keel/store-fs append, 1 appender", () => appenders("one", 1), options);
  bench("@keel/store-fs append, 8 concurrent appenders", () => appenders("eight", 8), options);
  bench("@keel/store-fs append, 64 concurrent appenders", () => appenders("sixty-four", 64), options);
});

describe("lease: acquire + release of one lease", () => {
  const options = { time: 3_000, warmupTime: 300 };
  bench(
    "two durable writes (what an fsynced acquire + release costs)",
    async () => {
      await tmpFsyncRenameDirFsyncSyncMetadata(path.join(root, "lease-floor.json"), documentBytes);
      await tmpFsyncRenameDirFsyncSyncMetadata(path.join(root, "lease-floor.json"), documentBytes);
    },
    options,
  );
  bench(
    "@keel/store-fs docs.put (one durable doc write, for scale)",
    async () => {
      const result = await store.docs.put(["bench", "lease-scale"], { turn: leaseScaleVersion }, leaseScaleVersion === 0 ? { create: true } : { expectedVersion: leaseScaleVersion });
      leaseScaleVersion = result._unsafeUnwrap().version;
    },
    options,
  );
  bench(
    "@keel/store-fs acquire + release (lease state not fsynced)",
    async () => {
      const lease = (await store.leases.acquire("bench.lease", "bench-holder", { ttlMs: 30_000 }))._unsafeUnwrap();
      (await store.leases.release(lease))._unsafeUnwrap();
    },
    options,
  );
});
