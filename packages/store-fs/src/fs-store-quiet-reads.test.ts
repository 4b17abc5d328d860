import { createHash } from "node:crypto";
import { appendFileSync, chmodSync, constants, cpSync, lstatSync, readdirSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import type { KeelStore } from "@keel/store";
import { heldLockEntry, LOCK_FREE_ENTRY, lockHostTag } from "@keel/store/kit";
import { errOf, okValue as value, useTempDirs, type AnyResult } from "@keel/testkit";
import { afterEach, describe, expect, it } from "vitest";
import type { FsStoreOptions, FsStoreWarning } from "./fs-store-options.js";
import { createFsStore } from "./index.js";
import { nodeFsIo, type FsIo } from "./internal/fs-io.js";
import { storePaths } from "./internal/fs-paths.js";
import { BOOT_FORMAT } from "./internal/lease-epoch.js";
import { openFsStore } from "./internal/open-fs-store.js";

/**
 * A store opened with `create: false` (what `keel inspect`, `keel workflow status` and the source
 * of `keel store copy` use) writes nothing when it reads: no lock token, no lock directory, no id
 * sidecar, no boot record, no cut tail. Proved three ways: the whole tree (every path, its mode,
 * size, mtime, ctime and bytes) is identical after every read operation, the file-system layer
 * saw no mutating call, and the answers are those of a store opened with `create: true` on a copy.
 */

const dirs = useTempDirs("keel-fs-quiet-reads-");
const readOnlyDirs: string[] = [];
afterEach(() => {
  // Give the temporary directories back their write bits, so that they can be removed.
  for (const dir of readOnlyDirs.splice(0)) chmodTree(dir, true);
});

/** Every entry under `dir` with its type, mode, size, mtime, ctime and (for a file) the hash of its bytes. */
function snapshot(dir: string): string[] {
  const lines: string[] = [];
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const full = path.join(current, name);
      const info = lstatSync(full, { bigint: true });
      const kind = info.isDirectory() ? "d" : info.isFile() ? "f" : "other";
      const bytes = kind === "f" ? createHash("sha256").update(readFileSync(full)).digest("hex").slice(0, 16) : "";
      lines.push(`${path.relative(dir, full)} ${kind} ${info.mode.toString(8)} ${info.size} mtime=${info.mtimeNs} ctime=${info.ctimeNs} ${bytes}`);
      if (kind === "d") walk(full);
    }
  };
  walk(dir);
  return lines;
}

/** Adds or takes away every write bit under `dir` (like `chmod -R a-w` / `u+w`). */
function chmodTree(dir: string, writable: boolean): void {
  const apply = (target: string) => {
    const mode = lstatSync(target).mode & 0o777;
    chmodSync(target, writable ? mode | 0o200 : mode & ~0o222);
  };
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      apply(full);
    }
  };
  if (writable) apply(dir);
  walk(dir);
  if (!writable) apply(dir);
}

const { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND } = constants;
/** Open flags that can change a file. */
const WRITING_FLAGS = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;

/** The real file system, recording every call that could change something on disk. */
function recordingIo(): { io: FsIo; writes: string[] } {
  const writes: string[] = [];
  const record =
    <A extends unknown[], R>(name: string, call: (...args: A) => R) =>
    (...args: A): R => {
      writes.push(`${name} ${String(args[0])}`);
      return call(...args);
    };
  const io: FsIo = {
    ...nodeFsIo,
    openSync: (file, flags, mode) => {
      if ((flags & WRITING_FLAGS) !== 0) writes.push(`open(${flags}) ${file}`);
      return nodeFsIo.openSync(file, flags, mode);
    },
    openFileSync: (file, flags) => {
      if ((flags & WRITING_FLAGS) !== 0) writes.push(`openFile(${flags}) ${file}`);
      return nodeFsIo.openFileSync(file, flags);
    },
    writeSync: record("write", nodeFsIo.writeSync),
    ftruncateSync: record("ftruncate", nodeFsIo.ftruncateSync),
    renameSync: record("rename", nodeFsIo.renameSync),
    linkSync: record("link", nodeFsIo.linkSync),
    unlinkSync: record("unlink", nodeFsIo.unlinkSync),
    mkdirSync: record("mkdir", nodeFsIo.mkdirSync),
    rmdirSync: record("rmdir", nodeFsIo.rmdirSync),
    fsync: record("fsync", nodeFsIo.fsync),
    fsyncSync: record("fsyncSync", nodeFsIo.fsyncSync),
    fdatasync: record("fdatasync", nodeFsIo.fdatasync),
  };
  return { io, writes };
}

const DOCS = [
  ["missions", "m1"],
  ["missions", "m2", "role-sessions", "engineer"],
  ["missions", "gone"],
  ["missions", "healed"],
  ["missions", "broken"],
  ["missions", "absent"],
];
const LOGS = [
  ["runs", "r1"],
  ["runs", "big"],
  ["runs", "torn"],
  ["runs", "dropped"],
  ["runs", "absent"],
];
const LEASES = ["mission-m1", "mission-m2", "never"];

/** A store with every kind of thing a read meets: backups, tombstones, damage, big, torn and deleted logs, leases. */
async function populate(dir: string): Promise<void> {
  const store = createFsStore({ dir });
  await value(store.docs.put(["missions", "m1"], { objective: "ship" }, { create: true }));
  await value(store.docs.put(["missions", "m1"], { objective: "ship it" }, { expectedVersion: 1 }));
  await value(store.docs.put(["missions", "m2", "role-sessions", "engineer"], { turns: 3 }, { create: true }));
  await value(store.docs.put(["missions", "gone"], { doomed: true }, { create: true }));
  await value(store.docs.delete(["missions", "gone"], { expectedVersion: 1 }));
  for (const name of ["healed", "broken"]) {
    await value(store.docs.put(["missions", name], { round: 1 }, { create: true }));
    await value(store.docs.put(["missions", name], { round: 2 }, { expectedVersion: 1 }));
  }
  await value(store.logs.append(["runs", "r1"], [{ id: "call-0", value: { ok: true } }]));
  await value(store.logs.append(["runs", "r1"], [{ id: "call-1", value: { ok: false } }]));
  // Over 256 KiB: reads of it would save an id sidecar.
  for (let batch = 0; batch < 30; batch++) {
    await value(store.logs.append(["runs", "big"], Array.from({ length: 10 }, (_, index) => ({ id: `b${batch}-${index}`, value: { text: "x".repeat(1000) } }))));
  }
  await value(store.logs.append(["runs", "torn"], [{ id: "t-0", value: 0 }]));
  await value(store.logs.append(["runs", "dropped"], [{ id: "d-0", value: 0 }]));
  await value(store.logs.delete(["runs", "dropped"]));
  const lease = await value(store.leases.acquire("mission-m1", "worker-1", { ttlMs: 60_000 }));
  await value(store.leases.release(lease));
  await value(store.leases.acquire("mission-m2", "worker-2", { ttlMs: 3_600_000 }));
  await store.close();
  // Damage: one document served from its backup, one beyond it; a torn last batch.
  writeFileSync(path.join(dir, "missions", "healed.json"), "{ torn");
  writeFileSync(path.join(dir, "missions", "broken.json"), "{ torn");
  writeFileSync(path.join(dir, "missions", "broken.json.bak"), "{ torn too");
  appendFileSync(path.join(dir, "runs", "torn.jsonl"), '{"seq":2,"id":"t-1","at":"');
}

/** What a crash and a reboot leave: no lock directories, no id sidecars, a boot record of an earlier boot. */
function afterReboot(dir: string): void {
  rmSync(path.join(dir, "_keel", "locks"), { recursive: true });
  rmSync(path.join(dir, "_keel", "logidx"), { recursive: true, force: true });
  const boot = "boot_id:00000000-0000-0000-0000-000000000000";
  const epoch = 0;
  const checksum = `sha256:${createHash("sha256").update(`${BOOT_FORMAT}\n${boot}\n${epoch}`).digest("hex")}`;
  writeFileSync(path.join(dir, "_keel", "boot.json"), `${JSON.stringify({ format: BOOT_FORMAT, boot, epoch, checksum }, null, 2)}\n`);
}

/** A call's answer, or its error's code. */
async function answer<T>(outcome: AnyResult<T>): Promise<unknown> {
  const result = await outcome;
  return result.isOk() ? (result.value ?? null) : { error: result.error.code };
}

/** Every read operation of the store, on every key, with what each answered. */
async function readEverything(store: KeelStore): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (const key of DOCS) answers.push(["docs.get", key, await answer(store.docs.get(key))]);
  answers.push(["docs.list", await answer(store.docs.list([]))]);
  let after: string | undefined;
  do {
    const page = await value(store.docs.list(["missions"], { limit: 2, ...(after ? { after } : {}) }));
    answers.push(["docs.list page", page]);
    after = page.next;
  } while (after);
  for (const log of LOGS) {
    const head = await answer(store.logs.head(log));
    answers.push(["logs.head", log, head]);
    answers.push(["logs.read", log, await answer(store.logs.read(log))]);
    answers.push(["logs.read limit", log, await answer(store.logs.read(log, { limit: 2 }))]);
    const lastSeq = (head as { lastSeq?: number } | null)?.lastSeq ?? 0;
    answers.push(["logs.read tail", log, await answer(store.logs.read(log, { afterSeq: Math.max(0, lastSeq - 3) }))]);
  }
  answers.push(["logs.list", await answer(store.logs.list([]))]);
  answers.push(["logs.list runs", await answer(store.logs.list(["runs"]))]);
  for (const name of LEASES) answers.push(["leases.current", name, await answer(store.leases.current(name))]);
  answers.push(["check", await answer(store.check())]);
  return answers;
}

/** The answers of a store opened with `create: true` on a copy of `dir` (paths written as in `dir`). */
async function answersOfWriter(dir: string): Promise<{ answers: unknown[]; warnings: FsStoreWarning[] }> {
  const copy = path.join(dirs.dir(), "copy");
  cpSync(dir, copy, { recursive: true });
  const warnings: FsStoreWarning[] = [];
  const store = createFsStore({ dir: copy, onWarning: (warning) => warnings.push(warning) });
  const answers = await readEverything(store);
  await store.close();
  const text = JSON.stringify({ answers, warnings }).replaceAll(copy, dir);
  return JSON.parse(text) as { answers: unknown[]; warnings: FsStoreWarning[] };
}

/** Opens `dir` with `create: false` over `io`, reads everything, closes. */
async function readQuietly(dir: string, io: FsIo = nodeFsIo, options: Partial<FsStoreOptions> = {}) {
  const warnings: FsStoreWarning[] = [];
  const store = openFsStore({ dir, create: false, onWarning: (warning) => warnings.push(warning), ...options }, io);
  const answers = await readEverything(store);
  await store.close();
  return { answers: JSON.parse(JSON.stringify(answers)) as unknown[], warnings };
}

describe("a store opened with create: false writes nothing when it reads", () => {
  for (const [name, prepare] of [
    ["as its writers left it", () => undefined],
    ["after a crash and a reboot (no lock directories, no sidecars, a boot record of an earlier boot)", afterReboot],
  ] as const) {
    it(`changes nothing, makes no mutating call and answers as create: true, ${name}`, async () => {
      const dir = dirs.dir();
      await populate(dir);
      prepare(dir);
      const before = snapshot(dir);
      const { io, writes } = recordingIo();
      const quiet = await readQuietly(dir, io);
      expect(writes).toEqual([]);
      expect(snapshot(dir)).toEqual(before);

      // The answers are the reads' own: a document served from its backup (reported, not
      // restored), damage reported, the torn tail reported (not cut), the leases of an earlier
      // boot over.
      const writer = await answersOfWriter(dir);
      expect(quiet.answers).toEqual(writer.answers);
      expect(quiet.warnings).toEqual(writer.warnings);
      expect(quiet.warnings.map((warning) => warning.type)).toContain("served-backup");
      const report = quiet.answers.at(-1) as [string, { ok: boolean; problems: { location: string }[] }];
      expect(report[1].ok).toBe(false);
      expect(report[1].problems.map((problem) => path.relative(dir, problem.location)).sort()).toEqual(
        [path.join("missions", "broken.json"), path.join("missions", "healed.json"), `${path.join("runs", "torn.jsonl")}:${statSize(dir, "torn") - 26}`].sort(),
      );
      const current = quiet.answers.filter((entry) => (entry as unknown[])[0] === "leases.current").map((entry) => (entry as unknown[])[2]);
      if (name.startsWith("after")) expect(current).toEqual([null, null, null]);
      else expect(current).toEqual([null, expect.objectContaining({ name: "mission-m2", holder: "worker-2" }), null]);
    });
  }

  it("reads a store whose every file and directory is read-only (chmod -R a-w), changing nothing", async () => {
    const dir = dirs.dir();
    await populate(dir);
    afterReboot(dir);
    const writer = await answersOfWriter(dir);
    chmodTree(dir, false);
    readOnlyDirs.push(dir);
    const before = snapshot(dir);
    // As root, permission bits stop no write: then the unchanged tree and the recorded calls are the proof.
    const { io, writes } = recordingIo();
    const quiet = await readQuietly(dir, io);
    expect(quiet.answers).toEqual(writer.answers);
    expect(writes).toEqual([]);
    expect(snapshot(dir)).toEqual(before);
    // The public entry point too, over the real file system.
    const store = createFsStore({ dir, create: false });
    expect((await value(store.docs.get(["missions", "m1"])))?.value).toEqual({ objective: "ship it" });
    expect((await value(store.check())).problems).toHaveLength(3);
    await store.close();
    expect(snapshot(dir)).toEqual(before);
  });
});

/** The size of log `runs/<name>`. */
function statSize(dir: string, name: string): number {
  return lstatSync(path.join(dir, "runs", `${name}.jsonl`)).size;
}

describe("check() of a store opened with create: false, without the log's lock", () => {
  const LOG = ["runs", "r1"];
  const file = (dir: string) => path.join(dir, "runs", "r1.jsonl");
  const lockOf = (dir: string) => storePaths(dir).lockDirectory("log:runs/r1");
  /** Marks the log's lock as held by `pid` since `startedAt` (as a writer of this host would). */
  const hold = (dir: string, pid: number, startedAt: number) => {
    const entry = heldLockEntry({ pid, host: lockHostTag(hostname()), startedAt, token: "abc1" });
    renameSync(path.join(lockOf(dir), LOCK_FREE_ENTRY), path.join(lockOf(dir), entry));
    return () => renameSync(path.join(lockOf(dir), entry), path.join(lockOf(dir), LOCK_FREE_ENTRY));
  };
  /** A log of one record, and the exact bytes of the next batch (written by a store, then cut off). */
  const prepare = async (dir: string) => {
    const store = createFsStore({ dir });
    await value(store.logs.append(LOG, [{ id: "call-0", value: { ok: true } }]));
    const committed = statSize(dir, "r1");
    await value(store.logs.append(LOG, [{ id: "call-1", value: { ok: true } }]));
    await store.close();
    const batch = readFileSync(file(dir)).subarray(committed);
    truncateSync(file(dir), committed);
    return batch;
  };

  it("does not take an append in flight in another process for a torn tail", async () => {
    const dir = dirs.dir();
    const batch = await prepare(dir);
    // Another process holds the lock and has written half its batch.
    const release = hold(dir, process.pid, Date.now());
    appendFileSync(file(dir), batch.subarray(0, 20));
    const store = createFsStore({ dir, create: false });
    let settled = false;
    const checking = Promise.resolve(store.check()).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The check saw the half-written batch and waits, reading the lock directory, for the writer to leave.
    expect(settled).toBe(false);
    // It finishes its write and releases the lock.
    appendFileSync(file(dir), batch.subarray(20));
    release();
    const before = snapshot(dir);
    const report = await value(checking);
    expect(report).toMatchObject({ ok: true, problems: [] });
    expect(await value(store.logs.head(LOG))).toEqual({ lastSeq: 2 });
    await store.close();
    expect(snapshot(dir)).toEqual(before);
  });

  it("reports a torn tail under a stale lock without taking the lock over", async () => {
    const dir = dirs.dir();
    const batch = await prepare(dir);
    // A holder older than lockStaleMs: stale, its write never finished.
    hold(dir, process.pid, 1);
    appendFileSync(file(dir), batch.subarray(0, 20));
    const before = snapshot(dir);
    const store = createFsStore({ dir, create: false });
    const report = await value(store.check());
    expect(report.problems).toEqual([
      expect.objectContaining({ code: "orphan", location: lockOf(dir), message: expect.stringContaining("stale lock") }),
      expect.objectContaining({ code: "corrupt", location: `${file(dir)}:${statSize(dir, "r1") - 20}`, message: expect.stringContaining("torn tail of 20 bytes") }),
    ]);
    await store.close();
    expect(snapshot(dir)).toEqual(before);
  });

  it("is unavailable, with nothing written, while a live holder keeps the lock of a log with a tail", async () => {
    const dir = dirs.dir();
    const batch = await prepare(dir);
    const release = hold(dir, process.pid, Date.now());
    appendFileSync(file(dir), batch.subarray(0, 20));
    const before = snapshot(dir);
    const store = createFsStore({ dir, create: false, lockWaitMs: 100 });
    const error = await errOf(store.check());
    expect(error.code).toBe("unavailable");
    expect(error.retryable).toBe(true);
    await store.close();
    expect(snapshot(dir)).toEqual(before);
    release();
  });

  it("still takes the lock when it repairs, and a create: true store's check still takes it", async () => {
    const dir = dirs.dir();
    const batch = await prepare(dir);
    appendFileSync(file(dir), batch.subarray(0, 20));
    const quiet = createFsStore({ dir, create: false });
    const repaired = await value(quiet.check({ repair: true }));
    expect(repaired.repaired.map((repair) => repair.action)).toEqual(["truncated-tail"]);
    await quiet.close();
    const release = hold(dir, process.pid, Date.now());
    const writer = createFsStore({ dir, lockWaitMs: 100 });
    expect((await errOf(writer.check())).code).toBe("unavailable");
    await writer.close();
    release();
  });
});
