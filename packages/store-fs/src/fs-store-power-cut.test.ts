/**
 * What a power cut can leave of the store's own metadata, injected as files, and the order of
 * the writes that keep it from happening: the layout marker written durably (empty or torn: written
 * again), lock and lease directories fsynced before they are renamed into place (empty ones:
 * read as free and rebuilt). Each state: the store opens, `check()` answers, and every key and
 * lease stays writable.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import type { KeelStore } from "@keel/store";
import { errOf, okValue, useTempDirs } from "@keel/testkit";
import { describe, expect, it } from "vitest";
import type { FsStoreWarning } from "./fs-store-options.js";
import { nodeFsIo, type FsIo } from "./internal/fs-io.js";
import { heldLockEntry, lockHostTag } from "@keel/store/kit";
import { storePaths } from "./internal/fs-paths.js";
import { openFsStore } from "./internal/open-fs-store.js";

const dirs = useTempDirs("keel-power-cut-");
const tempDir = () => dirs.dir();

/** Records the calls that make metadata durable or change it, in order, with the paths they act on (an fsync by the path its fd was opened at). */
function recordingIo(): { io: FsIo; calls: string[] } {
  const calls: string[] = [];
  const opened = new Map<number, string>();
  const io: FsIo = {
    ...nodeFsIo,
    openSync: (file, flags, mode) => {
      const fd = nodeFsIo.openSync(file, flags, mode);
      opened.set(fd, file);
      return fd;
    },
    closeSync: (fd) => {
      opened.delete(fd);
      nodeFsIo.closeSync(fd);
    },
    fsync: (fd) => (calls.push(`fsync ${opened.get(fd)}`), nodeFsIo.fsync(fd)),
    fsyncSync: (fd) => (calls.push(`fsync ${opened.get(fd)}`), nodeFsIo.fsyncSync(fd)),
    renameSync: (from, to) => (calls.push(`rename ${from} -> ${to}`), nodeFsIo.renameSync(from, to)),
    mkdirSync: (directory, mode) => (calls.push(`mkdir ${directory}`), nodeFsIo.mkdirSync(directory, mode)),
  };
  return { io, calls };
}

function open(dir: string, io: FsIo = nodeFsIo, warnings: FsStoreWarning[] = []): KeelStore {
  return dirs.track(openFsStore({ dir, onWarning: (warning) => warnings.push(warning) }, io));
}

/** Every key and lease of the store is writable, and check() answers. */
async function expectWritable(store: KeelStore): Promise<void> {
  const doc = await okValue(store.docs.put(["k", "d"], { after: "the cut" }, { unconditional: true }));
  expect(doc.value).toEqual({ after: "the cut" });
  expect((await okValue(store.logs.append(["runs", "r"], [{ id: `after-${doc.version}`, value: 1 }]))).appended).toBe(1);
  const lease = await okValue(store.leases.acquire("l", "after", { ttlMs: 60_000 }));
  expect(await okValue(store.leases.current("l"))).toMatchObject({ holder: "after", token: lease.token });
  await okValue(store.leases.release(lease));
  expect((await okValue(store.check())).ok).toBe(true);
}

describe("the layout marker", () => {
  it("is written durably: staging file fsynced, renamed, its directory fsynced, and the directories above it fsynced where new", () => {
    const dir = path.join(tempDir(), "store");
    const { io, calls } = recordingIo();
    open(dir, io);
    const paths = storePaths(dir);
    const rename = calls.findIndex((call) => call.startsWith("rename ") && call.endsWith(` -> ${paths.marker}`));
    expect(rename).toBeGreaterThan(0);
    const staging = calls[rename]!.slice("rename ".length, calls[rename]!.indexOf(" -> "));
    expect(calls.slice(0, rename)).toContain(`fsync ${staging}`);
    expect(calls.slice(rename + 1)).toContain(`fsync ${paths.internal}`);
    // The store's own directory, new here, is made durable in its parent first.
    expect(calls.slice(calls.indexOf(`mkdir ${dir}`) + 1)).toContain(`fsync ${path.dirname(dir)}`);
    const madeInternal = calls.indexOf(`mkdir ${paths.internal}`);
    expect(madeInternal).toBeGreaterThanOrEqual(0);
    expect(calls.slice(madeInternal + 1)).toContain(`fsync ${paths.root}`);
  });

  it.each([
    ["empty (zero length: ext4's file after a rename without fsync)", ""],
    ["torn (a prefix of it)", '{\n  "format": "keel.fs-st'],
    ["NUL bytes (blocks allocated, data lost)", "\0".repeat(48)],
  ])("%s: the store opens, writes it again with a warning, and stays writable", async (_name, text) => {
    const dir = path.join(tempDir(), "store");
    const first = open(dir);
    await okValue(first.docs.put(["k", "d"], { before: "the cut" }, { create: true }));
    await first.close();
    writeFileSync(storePaths(dir).marker, text);
    const warnings: FsStoreWarning[] = [];
    const store = open(dir, nodeFsIo, warnings);
    expect(warnings).toEqual([expect.objectContaining({ type: "rewrote-marker", location: storePaths(dir).marker })]);
    expect(JSON.parse(readFileSync(storePaths(dir).marker, "utf8"))).toEqual({ format: "keel.fs-store", version: 2 });
    expect((await okValue(store.docs.get(["k", "d"])))?.value).toEqual({ before: "the cut" });
    await expectWritable(store);
  });

  it("that parses but names another format or a newer layout is still refused", () => {
    const dir = path.join(tempDir(), "store");
    open(dir);
    writeFileSync(storePaths(dir).marker, JSON.stringify({ format: "someone-else", version: 1 }));
    expect(() => open(dir)).toThrow(expect.objectContaining({ code: "corrupt" }));
    writeFileSync(storePaths(dir).marker, JSON.stringify({ format: "keel.fs-store", version: 99 }));
    expect(() => open(dir)).toThrow(expect.objectContaining({ code: "unsupported" }));
    writeFileSync(storePaths(dir).marker, "null");
    expect(() => open(dir)).toThrow(expect.objectContaining({ code: "corrupt" }));
  });
});

describe("lock directories", () => {
  it("are fsynced with their token before the rename into place, and their parent after it", async () => {
    const dir = path.join(tempDir(), "store");
    const { io, calls } = recordingIo();
    const store = open(dir, io);
    calls.length = 0;
    await okValue(store.docs.put(["k", "d"], 1, { create: true }));
    const lock = storePaths(dir).lockDirectory("doc:k/d");
    const rename = calls.findIndex((call) => call.endsWith(` -> ${lock}`));
    expect(rename).toBeGreaterThan(0);
    const building = calls[rename]!.slice("rename ".length, calls[rename]!.indexOf(" -> "));
    expect(calls.slice(0, rename)).toContain(`fsync ${building}`);
    expect(calls[rename + 1]).toBe(`fsync ${storePaths(dir).locks}`);
  });

  it("left empty by a power cut are read as free: puts, check() and check({ repair: true }) work", async () => {
    const dir = path.join(tempDir(), "store");
    const first = open(dir);
    await okValue(first.docs.put(["k", "d"], 1, { create: true }));
    await first.close();
    const lock = storePaths(dir).lockDirectory("doc:k/d");
    rmSync(lock, { recursive: true });
    mkdirSync(lock);
    const store = open(dir);
    const report = await okValue(store.check());
    expect(report.problems).toEqual([expect.objectContaining({ code: "orphan", location: lock })]);
    await okValue(store.docs.put(["k", "d"], 2, { expectedVersion: 1 }));
    expect(readdirSync(lock)).toEqual(["free"]);
    // Empty again, mended by a repair this time.
    rmSync(lock, { recursive: true });
    mkdirSync(lock);
    const repaired = await okValue(store.check({ repair: true }));
    expect(repaired.repaired).toEqual([expect.objectContaining({ location: lock })]);
    expect(readdirSync(lock)).toEqual(["free"]);
    await expectWritable(store);
  });

  it("holding the empty token of a process that died with the machine are taken over", async () => {
    const dir = path.join(tempDir(), "store");
    const store = open(dir);
    const lock = storePaths(dir).lockDirectory("doc:k/d");
    mkdirSync(lock, { recursive: true });
    const dead = heldLockEntry({ pid: 2 ** 22 + 7, host: lockHostTag(hostname()), startedAt: Date.now(), token: "dead" });
    writeFileSync(path.join(lock, dead), "");
    await okValue(store.docs.put(["k", "d"], 1, { create: true }));
    expect(readdirSync(lock)).toEqual(["free"]);
    await expectWritable(store);
  });
});

describe("lease directories", () => {
  it("are fsynced with their entry before the rename into place, and the leases directory after it", async () => {
    const dir = path.join(tempDir(), "store");
    const { io, calls } = recordingIo();
    const store = open(dir, io);
    calls.length = 0;
    await okValue(store.leases.acquire("l", "me", { ttlMs: 1000 }));
    const lease = path.join(storePaths(dir).leases, "l");
    const rename = calls.findIndex((call) => call.endsWith(` -> ${lease}`));
    expect(rename).toBeGreaterThan(0);
    const building = calls[rename]!.slice("rename ".length, calls[rename]!.indexOf(" -> "));
    expect(calls.slice(0, rename)).toContain(`fsync ${building}`);
    expect(calls[rename + 1]).toBe(`fsync ${storePaths(dir).leases}`);
  });

  it("left empty by a power cut are a lease never held: current, acquire, check() and check({ repair: true }) work", async () => {
    const dir = path.join(tempDir(), "store");
    const first = open(dir);
    const before = await okValue(first.leases.acquire("l", "before", { ttlMs: 60_000 }));
    await first.close();
    const lease = path.join(storePaths(dir).leases, "l");
    for (const entry of readdirSync(lease)) rmSync(path.join(lease, entry));
    const store = open(dir);
    expect(await okValue(store.leases.current("l"))).toBeUndefined();
    const report = await okValue(store.check());
    expect(report.problems).toEqual([expect.objectContaining({ code: "orphan", location: lease })]);
    const repaired = await okValue(store.check({ repair: true }));
    expect(repaired.repaired).toEqual([expect.objectContaining({ location: lease })]);
    expect(readdirSync(lease)).toEqual(["0.0."]);
    const after = await okValue(store.leases.acquire("l", "after", { ttlMs: 60_000 }));
    expect(after.holder).toBe("after");
    // Empty again: an acquisition rebuilds it by itself.
    await okValue(store.leases.release(after));
    for (const entry of readdirSync(lease)) rmSync(path.join(lease, entry));
    expect((await okValue(store.leases.acquire("l", "again", { ttlMs: 60_000 }))).holder).toBe("again");
    expect(before.token).toBeGreaterThan(0);
    const held = await okValue(store.leases.current("l"));
    await okValue(store.leases.release(held!));
    await expectWritable(store);
  });

  it("that hold anything else than one state are still corrupt", async () => {
    const dir = path.join(tempDir(), "store");
    const store = open(dir);
    await okValue(store.leases.acquire("l", "me", { ttlMs: 1000 }));
    writeFileSync(path.join(storePaths(dir).leases, "l", "not-a-state"), "");
    // A new instance (this one remembers the entry it wrote).
    expect((await errOf(open(dir).leases.current("l"))).code).toBe("corrupt");
  });
});
