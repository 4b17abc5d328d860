import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { updateDoc } from "@keel/store/kit";
import { afterEach, describe, expect, it } from "vitest";
import { createFsStore, type FsStoreOptions, type FsStoreWarning } from "./index.js";
import { nodeFsIo } from "./internal/fs-io.js";
import { heldLockEntry, lockHostTag } from "@keel/store/kit";
import { createLockManager } from "./internal/fs-lock.js";
import { storePaths } from "./internal/fs-paths.js";
import { errOf as failure, okValue as value, useTempDirs } from "@keel/testkit";

const dirs = useTempDirs("keel-fs-locks-");
const children: ChildProcess[] = [];
// Registered after useTempDirs', so it runs first: the children die before their stores close.
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

function setup(options: Omit<FsStoreOptions, "dir"> = {}) {
  const dir = dirs.dir();
  const warnings: FsStoreWarning[] = [];
  const store = dirs.track(createFsStore({ dir, onWarning: (warning) => warnings.push(warning), ...options }));
  const paths = storePaths(dir);
  return { dir, store, warnings, paths, docLock: paths.lockDirectory("doc:d") };
}

/** A held lock as another process would have left it; returns its entry name. */
function plantLock(lockDirectory: string, holder: { pid: number; hostname?: string; startedAt?: number }): string {
  const entry = heldLockEntry({ pid: holder.pid, host: lockHostTag(holder.hostname ?? hostname()), token: "abcdef12", startedAt: holder.startedAt ?? Date.now() });
  mkdirSync(lockDirectory, { recursive: true });
  rmSync(path.join(lockDirectory, "free"), { force: true });
  for (const old of readdirSync(lockDirectory)) rmSync(path.join(lockDirectory, old));
  writeFileSync(path.join(lockDirectory, entry), "");
  return entry;
}

const entries = (lockDirectory: string) => readdirSync(lockDirectory).sort();
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;
function livePid(): number {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  children.push(child);
  return child.pid!;
}

describe("locks", () => {
  it("leaves the lock free after an operation: one token, renamed back", async () => {
    const { store, docLock } = setup();
    await value(store.docs.put(["d"], 1, { create: true }));
    expect(entries(docLock)).toEqual(["free"]);
  });

  it("takes over at once a lock whose holder process is gone", async () => {
    const { store, docLock, warnings } = setup({ lockWaitMs: 0 });
    plantLock(docLock, { pid: deadPid() });
    expect((await value(store.docs.put(["d"], 1, { create: true }))).version).toBe(1);
    expect(warnings.map((warning) => [warning.type, warning.location])).toEqual([["took-over-stale-lock", docLock]]);
    expect(entries(docLock)).toEqual(["free"]);
  });

  it("waits for a live holder, then answers unavailable (retryable) and changes nothing", async () => {
    const { store, docLock } = setup({ lockWaitMs: 150 });
    const entry = plantLock(docLock, { pid: livePid() });
    const error = await failure(store.docs.put(["d"], 1, { create: true }));
    expect(error.code).toBe("unavailable");
    expect(error.retryable).toBe(true);
    expect(entries(docLock)).toEqual([entry]);
    expect(await value(store.docs.get(["d"]))).toBeUndefined();
    setTimeout(() => renameSync(path.join(docLock, entry), path.join(docLock, "free")), 50);
    const waited = await store.docs.put(["d"], 1, { create: true }).orElse(() => store.docs.put(["d"], 1, { create: true }));
    expect(waited.isOk()).toBe(true);
  });

  it("takes over a live holder's lock once it is older than lockStaleMs, and judges other hosts by age only", async () => {
    const { store, docLock } = setup({ lockWaitMs: 100, lockStaleMs: 1_000 });
    plantLock(docLock, { pid: livePid(), startedAt: Date.now() - 5_000 });
    expect((await value(store.docs.put(["d"], 1, { create: true }))).version).toBe(1);
    plantLock(docLock, { pid: deadPid(), hostname: "another-host" });
    expect((await failure(store.docs.put(["d"], 2, { expectedVersion: 1 }))).code).toBe("unavailable");
    plantLock(docLock, { pid: deadPid(), hostname: "another-host", startedAt: Date.now() - 5_000 });
    expect((await value(store.docs.put(["d"], 2, { expectedVersion: 1 }))).version).toBe(2);
  });

  it("treats an entry that names no holder as stale, and refuses a lock directory without exactly one token", async () => {
    const { store, docLock } = setup({ lockWaitMs: 0 });
    mkdirSync(docLock, { recursive: true });
    writeFileSync(path.join(docLock, "held.not-a-holder"), "");
    expect((await value(store.docs.put(["d"], 1, { create: true }))).version).toBe(1);
    plantLock(docLock, { pid: livePid() });
    writeFileSync(path.join(docLock, "free"), "");
    writeFileSync(path.join(docLock, "held.other"), "");
    rmSync(path.join(docLock, "free"));
    const error = await failure(store.docs.put(["d"], 2, { expectedVersion: 1 }));
    expect(error.code).toBe("io_failed");
    expect(error.details.location).toBe(docLock);
  });

  it("never lets a taker displace a fresh lock, nor a late holder free someone else's lock", async () => {
    const { paths, docLock } = setup();
    const warnings: FsStoreWarning[] = [];
    const manager = (staleMs: number) =>
      createLockManager({
        io: nodeFsIo,
        directory: paths.locks,
        directoryOf: paths.lockDirectory,
        staleMs,
        waitMs: 2_000,
        contain: () => {},
        warn: (warning) => warnings.push(warning),
      });
    const stale = plantLock(docLock, { pid: deadPid() });
    const seen = manager(10_000).inspect(docLock);
    expect(seen).toMatchObject({ state: "held", entry: stale, stale: true });
    // Another process takes the stale lock over first: the late taker's rename finds nothing.
    const fresh = heldLockEntry({ pid: livePid(), host: lockHostTag(hostname()), startedAt: Date.now(), token: "feedbeef" });
    renameSync(path.join(docLock, stale), path.join(docLock, fresh));
    expect(manager(10_000).free(docLock, stale)).toBe(false);
    expect(entries(docLock)).toEqual([fresh]);
    rmSync(docLock, { recursive: true });

    // A holder stalls past lockStaleMs and another process takes the lock over (renaming the
    // holder's entry to its own); the stalled holder's release then frees nothing.
    const release = await manager(10_000).acquire(["doc:d"]);
    const [mine] = entries(docLock);
    const taker = heldLockEntry({ pid: livePid(), host: lockHostTag(hostname()), startedAt: Date.now(), token: "c0ffee00" });
    renameSync(path.join(docLock, mine!), path.join(docLock, taker));
    release();
    expect(entries(docLock)).toEqual([taker]);
    expect(warnings.map((warning) => warning.type)).toContain("lock-lost");
  });

  it("reports stale locks and half-built lock and lease directories in check(), and frees or removes them with repair", async () => {
    const { store, paths, docLock } = setup();
    plantLock(docLock, { pid: deadPid() });
    const building = path.join(paths.locks, `.init.${deadPid()}.abc`);
    mkdirSync(building);
    writeFileSync(path.join(building, "free"), "");
    // A lease directory left half-built the same way.
    const leaseBuilding = path.join(paths.leases, `.init.${deadPid()}.def`);
    mkdirSync(leaseBuilding);
    writeFileSync(path.join(leaseBuilding, "0.0."), "");
    const live = plantLock(paths.lockDirectory("doc:f"), { pid: livePid() });
    const byLocation = (left: { location: string }, right: { location: string }) => left.location.localeCompare(right.location);
    const report = await value(store.check());
    expect(report.problems.map(({ code, location }) => ({ code, location })).sort(byLocation)).toEqual(
      [
        { code: "orphan", location: building },
        { code: "orphan", location: docLock },
        { code: "orphan", location: leaseBuilding },
      ].sort(byLocation),
    );
    const repaired = await value(store.check({ repair: true }));
    expect(repaired.repaired.map((repair) => repair.action).sort()).toEqual(["removed-stale-lock", "removed-tmp", "removed-tmp"]);
    expect(repaired.ok).toBe(true);
    expect(entries(docLock)).toEqual(["free"]);
    expect(existsSync(building)).toBe(false);
    expect(existsSync(leaseBuilding)).toBe(false);
    expect(entries(paths.lockDirectory("doc:f"))).toEqual([live]);
  });

  it("serializes read-modify-writes of two store instances on one directory", async () => {
    const { dir, store } = setup();
    const other = dirs.track(createFsStore({ dir }));
    await Promise.all(
      [store, other].flatMap((target) =>
        Array.from({ length: 10 }, () => value(updateDoc<{ n: number }>(target.docs, ["counter"], (current) => ({ n: (current?.value.n ?? 0) + 1 }), { retries: 200 }))),
      ),
    );
    expect((await value(store.docs.get(["counter"])))?.value).toEqual({ n: 20 });
  });
});
