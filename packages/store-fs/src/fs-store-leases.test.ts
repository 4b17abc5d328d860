import { createHash } from "node:crypto";
import { existsSync, fstatSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync, type Dirent } from "node:fs";
import path from "node:path";
import { createManualClock } from "@keel/core";
import type { KeelStore, Lease } from "@keel/store";
import { describe, expect, it } from "vitest";
import type { FsStoreOptions } from "./fs-store-options.js";
import { nodeFsIo, type FsIo } from "./internal/fs-io.js";
import { EPOCH_SPAN } from "./internal/lease-epoch.js";
import { openFsStore } from "./internal/open-fs-store.js";
import { errOf as failure, okValue as value, useTempDirs } from "@keel/testkit";

const BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id";

const dirs = useTempDirs("keel-fs-leases-");
const tempDir = () => dirs.dir();

/**
 * The real file system, with this machine's boot id chosen by the test (a "reboot" is a new
 * id), fsyncs and renames counted, and the next listing of a lease directory shown with a second,
 * made-up entry on request (as a listing that races a rename can show the old and the new name).
 */
function testIo(boot: { id: string }) {
  const counts = { fsync: 0, rename: 0, leaseLockRenames: 0 };
  const state: {
    doubleNextListing: boolean;
    fsyncGate: { reached: () => void; opened: Promise<void> } | undefined;
    /** Runs just before the next rename that watches a lease entry, with the entry's path. */
    beforeWatch: ((entry: string) => void) | undefined;
  } = { doubleNextListing: false, fsyncGate: undefined, beforeWatch: undefined };
  const io: FsIo = {
    ...nodeFsIo,
    readFileSync: (file) => (file === BOOT_ID_FILE ? Buffer.from(`${boot.id}\n`) : nodeFsIo.readFileSync(file)),
    readdirSync: (directory) => {
      const entries = nodeFsIo.readdirSync(directory);
      if (state.doubleNextListing && directory.includes(`${path.sep}leases${path.sep}`) && entries.length === 1) {
        state.doubleNextListing = false;
        const ghost = Object.assign(Object.create(Object.getPrototypeOf(entries[0]!) as object) as Dirent, entries[0]!, { name: "1.1.Z2hvc3Q" });
        return [entries[0]!, ghost];
      }
      return entries;
    },
    renameSync: (from, to) => {
      if (to.endsWith(".w") && state.beforeWatch) {
        const hook = state.beforeWatch;
        state.beforeWatch = undefined;
        hook(from);
      }
      nodeFsIo.renameSync(from, to);
      counts.rename++;
      if (from.includes(`${path.sep}locks${path.sep}lease-`)) counts.leaseLockRenames++;
    },
    fsync: async (fd) => {
      counts.fsync++;
      const gate = state.fsyncGate;
      // A file's fsync (a directory's, such as a new lock directory's, passes).
      if (gate && !fstatSync(fd).isDirectory()) {
        state.fsyncGate = undefined;
        gate.reached();
        await gate.opened;
      }
      return nodeFsIo.fsync(fd);
    },
    fdatasync: (fd) => {
      counts.fsync++;
      return nodeFsIo.fdatasync(fd);
    },
  };
  return { io, counts, state };
}

function open(dir: string, io: FsIo, options: Omit<FsStoreOptions, "dir"> = {}): KeelStore {
  return dirs.track(openFsStore({ dir, ...options }, io));
}

const leaseDirectory = (dir: string, name: string) => path.join(dir, "_keel", "leases", name);
/** The one entry of a lease directory. */
const entryOf = (dir: string, name: string) => {
  const entries = readdirSync(leaseDirectory(dir, name));
  expect(entries).toHaveLength(1);
  return entries[0]!;
};
const code = (holder: string) => Buffer.from(holder).toString("base64url");

describe("lease state as one directory entry, changed by rename", () => {
  it("creates a lease directory durably once, then changes its state by renaming its one entry, without fsync", async () => {
    const dir = tempDir();
    const { io, counts } = testIo({ id: "boot-a" });
    const store = open(dir, io);
    const first = await value(store.leases.acquire("l", "alice", { ttlMs: 60_000 }));
    const directory = leaseDirectory(dir, "l");
    const inode = statSync(directory).ino;
    expect(entryOf(dir, "l")).toBe(`${first.token}.${first.expiresAt}.${code("alice")}`);
    const fsyncs = counts.fsync;
    await value(store.leases.release(first));
    expect(entryOf(dir, "l")).toBe(`${first.token}.0.${code("alice")}`);
    const second = await value(store.leases.acquire("l", "bob", { ttlMs: 60_000 }));
    const renewed = await value(store.leases.renew(second, { ttlMs: 30_000 }));
    expect(counts.fsync).toBe(fsyncs);
    expect(statSync(directory).ino).toBe(inode);
    expect(entryOf(dir, "l")).toBe(`${second.token}.${renewed.expiresAt}.${code("bob")}`);
    expect(await value(store.leases.current("l"))).toEqual(renewed);
    // Another instance (nothing remembered) reads the same state from the directory.
    expect(await value(open(dir, io).leases.current("l"))).toEqual(renewed);
  });

  it("makes no directory for a lease that is only read or released, never acquired", async () => {
    const dir = tempDir();
    const { io } = testIo({ id: "boot-a" });
    const store = open(dir, io);
    expect(await value(store.leases.current("l"))).toBeUndefined();
    await value(store.leases.release({ name: "l", holder: "alice", token: 3, expiresAt: Date.now() + 1_000 }));
    expect((await failure(store.leases.renew({ name: "l", holder: "alice", token: 3, expiresAt: Date.now() + 1_000 }))).code).toBe("lease_lost");
    expect(existsSync(leaseDirectory(dir, "l"))).toBe(false);
  });

  it("keeps a long holder's name in a file of its own, written durably once, and reads it back in another instance", async () => {
    const dir = tempDir();
    const { io, counts } = testIo({ id: "boot-a" });
    const store = open(dir, io);
    await value(store.leases.current("warm-up"));
    const holder = `h-${"é".repeat(250)}`;
    const fsyncs = counts.fsync;
    const lease = await value(store.leases.acquire("l", holder, { ttlMs: 60_000 }));
    expect(counts.fsync).toBeGreaterThan(fsyncs);
    expect(entryOf(dir, "l")).toMatch(new RegExp(`^${lease.token}\\.${lease.expiresAt}\\.~[0-9a-f]{40}$`));
    expect(await value(open(dir, io).leases.current("l"))).toEqual(lease);
    const holders = path.join(dir, "_keel", "lease-holders");
    const [file] = readdirSync(holders);
    expect(readFileSync(path.join(holders, file!), "utf8")).toBe(holder);
    // A damaged holder file is corrupt, never a wrong holder.
    writeFileSync(path.join(holders, file!), "mallory");
    expect((await failure(open(dir, io).leases.current("l"))).code).toBe("corrupt");
  });

  it("reads a listing again when it saw a rename half-way, and only a directory that keeps two entries is corrupt", async () => {
    const dir = tempDir();
    const { io, state } = testIo({ id: "boot-a" });
    const lease = await value(open(dir, io).leases.acquire("l", "alice", { ttlMs: 60_000 }));
    state.doubleNextListing = true;
    expect(await value(open(dir, io).leases.current("l"))).toEqual(lease);
    expect(state.doubleNextListing).toBe(false);
    writeFileSync(path.join(leaseDirectory(dir, "l"), "1.1.bWFsbG9yeQ"), "");
    const store = open(dir, io);
    expect((await failure(store.leases.current("l"))).code).toBe("corrupt");
    expect((await failure(store.leases.acquire("l", "bob", { ttlMs: 60_000 }))).code).toBe("corrupt");
  });

  it("keeps lease times in whole milliseconds when the clock gives fractions", async () => {
    const dir = tempDir();
    const clock = createManualClock(1_700_000_000_000.75);
    const { io } = testIo({ id: "boot-a" });
    const store = open(dir, io, { clock });
    const lease = await value(store.leases.acquire("l", "alice", { ttlMs: 1_000 }));
    expect(lease.expiresAt).toBe(1_700_000_001_000);
    expect(await value(open(dir, io, { clock }).leases.current("l"))).toEqual(lease);
    const renewed = await value(store.leases.renew(lease));
    expect(Number.isInteger(renewed.expiresAt)).toBe(true);
    expect((await value(store.check())).problems).toEqual([]);
  });

  it("lets exactly one of two instances win a free lease: the loser's rename fails and it decides again", async () => {
    const dir = tempDir();
    const { io } = testIo({ id: "boot-a" });
    const [a, b] = [open(dir, io), open(dir, io)];
    // Both instances remember the free state, so both try to rename it at once.
    await value(a.leases.release(await value(a.leases.acquire("l", "seed", { ttlMs: 60_000 }))));
    await value(b.leases.current("l"));
    const results = await Promise.all([a.leases.acquire("l", "alice", { ttlMs: 60_000 }), b.leases.acquire("l", "bob", { ttlMs: 60_000 })]);
    const won = results.filter((result) => result.isOk());
    expect(won).toHaveLength(1);
    expect(results.find((result) => result.isErr())?._unsafeUnwrapErr().code).toBe("lease_held");
    expect(await value(a.leases.current("l"))).toEqual(won[0]!._unsafeUnwrap());
  });
});

describe("fenced document writes", () => {
  it("check a lease this instance holds without its cross-process lock; a near expiry, another's lease or a lost one take the lock", async () => {
    const dir = tempDir();
    const clock = createManualClock();
    const { io, counts } = testIo({ id: "boot-a" });
    const store = open(dir, io, { clock, lockStaleMs: 10_000 });
    const lease = await value(store.leases.acquire("l", "alice", { ttlMs: 60_000 }));
    const fence = { lease: "l", token: lease.token };
    const before = counts.leaseLockRenames;
    await value(store.docs.put(["d"], 1, { create: true, fence }));
    expect(counts.leaseLockRenames).toBe(before);
    // Within lockStaleMs of expiry: the lock, so that no takeover slips in before the write lands.
    clock.advance(55_000);
    await value(store.docs.put(["d"], 2, { expectedVersion: 1, fence }));
    expect(counts.leaseLockRenames).toBe(before + 2);
    // Another instance did not acquire it: the lock.
    const other = open(dir, io, { clock, lockStaleMs: 10_000 });
    await value(other.docs.put(["d"], 3, { expectedVersion: 2, fence }));
    expect(counts.leaseLockRenames).toBe(before + 4);
    // Expired and taken over by another instance: the fence fails in both.
    clock.advance(5_001);
    const taken = await value(other.leases.acquire("l", "bob", { ttlMs: 60_000 }));
    expect(taken.token).toBe(lease.token + 1);
    expect((await failure(store.docs.put(["d"], 4, { expectedVersion: 3, fence }))).code).toBe("lease_lost");
    expect((await failure(other.docs.put(["d"], 4, { expectedVersion: 3, fence }))).code).toBe("lease_lost");
    expect(await value(store.docs.get(["d"]))).toMatchObject({ value: 3 });
  });

  it("the fast way sees a lease ended by another instance: the entry it knew is gone, so its fence fails", async () => {
    const dir = tempDir();
    const { io, counts } = testIo({ id: "boot-a" });
    const [store, other] = [open(dir, io), open(dir, io)];
    const lease = await value(store.leases.acquire("l", "alice", { ttlMs: 60_000 }));
    const fence = { lease: "l", token: lease.token };
    const before = counts.leaseLockRenames;
    await value(store.docs.put(["d"], 1, { create: true, fence }));
    expect(counts.leaseLockRenames).toBe(before);
    // The lease object handed to another process, released there, long before it would expire.
    await value(other.leases.release(lease));
    expect((await failure(store.docs.put(["d"], 2, { expectedVersion: 1, fence }))).code).toBe("lease_lost");
    // Taken by someone else meanwhile: still over for this instance, and the new holder writes.
    const bob = await value(other.leases.acquire("l", "bob", { ttlMs: 60_000 }));
    expect((await failure(store.docs.put(["d"], 2, { expectedVersion: 1, fence }))).code).toBe("lease_lost");
    await value(other.docs.put(["d"], 2, { expectedVersion: 1, fence: { lease: "l", token: bob.token } }));
    expect(await value(store.docs.get(["d"]))).toMatchObject({ value: 2, version: 2 });
  });

  it("take the lease's lock only to end a token that a write checked the safe way (watched), whoever ends it", async () => {
    const dir = tempDir();
    const clock = createManualClock();
    const { io, counts } = testIo({ id: "boot-a" });
    const store = open(dir, io, { clock });
    const locked = async <T>(change: () => Promise<T>): Promise<[T, number]> => {
      const before = counts.leaseLockRenames;
      const result = await change();
      return [result, counts.leaseLockRenames - before];
    };
    // A time to live below lockStaleMs: fenced writes check the safe way, and watch the token.
    const [a] = await locked(() => value(store.leases.acquire("l", "alice", { ttlMs: 1_000 })));
    await value(store.docs.put(["d"], 1, { create: true, fence: { lease: "l", token: a.token } }));
    expect(entryOf(dir, "l")).toMatch(/\.w$/);
    expect((await locked(() => value(store.leases.renew(a, { ttlMs: 1_000 }))))[1]).toBe(0);
    // The same holder taking its live lease again keeps the token, watched: nothing ends.
    expect((await locked(() => value(store.leases.acquire("l", "alice", { ttlMs: 1_000 }))))[1]).toBe(0);
    expect(entryOf(dir, "l")).toMatch(/\.w$/);
    clock.advance(1_001);
    // Expired, not released, watched: a write with its token may still be in flight, even for the same holder.
    const [b, takeover] = await locked(() => value(store.leases.acquire("l", "alice", { ttlMs: 1_000 })));
    expect([b.token, takeover]).toEqual([a.token + 1, 2]);
    expect(entryOf(dir, "l")).not.toMatch(/\.w$/);
    // A token nobody watched ends with one rename: a release, an expired lease taken over.
    expect((await locked(() => value(store.leases.release(b))))[1]).toBe(0);
    const [c] = await locked(() => value(store.leases.acquire("l", "bob", { ttlMs: 1_000 })));
    clock.advance(1_001);
    expect((await locked(() => value(store.leases.acquire("l", "carol", { ttlMs: 1_000 }))))[1]).toBe(0);
    expect((await failure(store.docs.put(["d"], 2, { expectedVersion: 1, fence: { lease: "l", token: c.token } }))).code).toBe("lease_lost");
    // A watched one takes the lock to be released.
    const carol = await value(store.leases.current("l"));
    await value(store.docs.put(["d"], 2, { expectedVersion: 1, fence: { lease: "l", token: carol!.token } }));
    expect((await locked(() => value(store.leases.release(carol!))))[1]).toBe(2);
  });

  it("a write that checks the safe way and a release that takes no lock never both win: the write's watch fails and its fence is over", async () => {
    const dir = tempDir();
    const { io, state } = testIo({ id: "boot-a" });
    const [writer, holder] = [open(dir, io), open(dir, io)];
    const lease = await value(holder.leases.acquire("l", "alice", { ttlMs: 60_000 }));
    const fence = { lease: "l", token: lease.token };
    // The holder releases between the writer's check and its watch (as another process could: a
    // release of a token nobody watched takes no lock). The watch's rename fails; the writer
    // reads again, and the fence is over.
    state.beforeWatch = (entry) => renameSync(entry, path.join(path.dirname(entry), `${lease.token}.0.${code("alice")}`));
    expect((await failure(writer.docs.put(["d"], 1, { create: true, fence }))).code).toBe("lease_lost");
    expect(state.beforeWatch).toBeUndefined();
    expect(await value(holder.leases.current("l"))).toBeUndefined();
    expect((await failure(writer.logs.append(["log"], [{ id: "a", value: 1 }], { fence }))).code).toBe("lease_lost");
    expect(await value(writer.docs.get(["d"]))).toBeUndefined();
  });

  it("a release in this process waits for a fenced write that passed its check, and the write after it fails", async () => {
    const dir = tempDir();
    const { io, state } = testIo({ id: "boot-a" });
    const store = open(dir, io);
    const lease = await value(store.leases.acquire("l", "alice", { ttlMs: 60_000 }));
    const fence = { lease: "l", token: lease.token };
    const order: string[] = [];
    // Hold the write at its fsync: its fence was checked the fast way (no cross-process lock).
    let openGate!: () => void;
    const reached = new Promise<void>((resolve) => {
      state.fsyncGate = { reached: resolve, opened: new Promise<void>((release) => (openGate = release)) };
    });
    const writing = store.docs.put(["d"], 1, { create: true, fence }).map((doc) => void order.push(`write v${doc.version}`));
    await reached;
    const releasing = store.leases.release(lease).map(() => void order.push("release"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]);
    openGate();
    await value(writing);
    await value(releasing);
    expect(order).toEqual(["write v1", "release"]);
    expect((await failure(store.docs.put(["d"], 2, { expectedVersion: 1, fence }))).code).toBe("lease_lost");
  });
});

describe("stores of layout 1", () => {
  it("move their lease files into lease directories when opened, keeping each state, and leave a damaged one for check()", async () => {
    const dir = tempDir();
    const leases = path.join(dir, "_keel", "leases");
    mkdirSync(leases, { recursive: true });
    writeFileSync(path.join(dir, "_keel", "store.json"), JSON.stringify({ format: "keel.fs-store", version: 1 }));
    const { io } = testIo({ id: "boot-a" });
    const boot = open(dir, io);
    await value(boot.leases.current("epoch")); // the boot record of this boot (epoch 0)
    await boot.close();
    const legacy = (name: string, state: { holder: string; token: number; expiresAt: number }) => {
      const checksum = `sha256:${createHash("sha256").update(`keel.lease.v1\n${name}\n${state.holder}\n${state.token}\n${state.expiresAt}`).digest("hex")}`;
      return JSON.stringify({ format: "keel.lease.v1", name, ...state, checksum }, null, 2);
    };
    writeFileSync(path.join(dir, "_keel", "store.json"), JSON.stringify({ format: "keel.fs-store", version: 1 }));
    const expiresAt = Date.now() + 60_000;
    writeFileSync(path.join(leases, "held.json"), legacy("held", { holder: "alice", token: 7, expiresAt }));
    writeFileSync(path.join(leases, "free.json"), legacy("free", { holder: "bob", token: 3, expiresAt: 0 }));
    writeFileSync(path.join(leases, "broken.json"), legacy("broken", { holder: "carol", token: 2, expiresAt: 0 }).replace("carol", "carl!"));
    const store = open(dir, io);
    expect(JSON.parse(readFileSync(path.join(dir, "_keel", "store.json"), "utf8"))).toMatchObject({ version: 2 });
    expect(await value(store.leases.current("held"))).toEqual({ name: "held", holder: "alice", token: 7, expiresAt });
    expect((await value(store.leases.acquire("free", "dave", { ttlMs: 60_000 }))).token).toBe(4);
    expect(existsSync(path.join(leases, "held.json"))).toBe(false);
    expect((await value(store.check())).problems).toEqual([expect.objectContaining({ code: "corrupt", location: path.join(leases, "broken.json") })]);
  });

  it("lose no lease when the upgrade fails half-way: the store stays layout 1 and the next open finishes it", async () => {
    const dir = tempDir();
    const leases = path.join(dir, "_keel", "leases");
    mkdirSync(leases, { recursive: true });
    const marker = path.join(dir, "_keel", "store.json");
    writeFileSync(marker, JSON.stringify({ format: "keel.fs-store", version: 1 }));
    const state = { holder: "alice", token: 7, expiresAt: Date.now() + 60_000 };
    const checksum = `sha256:${createHash("sha256").update(`keel.lease.v1\nheld\n${state.holder}\n${state.token}\n${state.expiresAt}`).digest("hex")}`;
    writeFileSync(path.join(leases, "held.json"), JSON.stringify({ format: "keel.lease.v1", name: "held", ...state, checksum }));
    // The lease directory is made, then removing the old file fails (as a crash there would leave it).
    const { io } = testIo({ id: "boot-a" });
    const failing: FsIo = {
      ...io,
      unlinkSync: (file) => {
        if (file.endsWith("held.json")) throw Object.assign(new Error(`EIO: ${file}`), { code: "EIO" });
        io.unlinkSync(file);
      },
    };
    expect(() => open(dir, failing)).toThrow(expect.objectContaining({ code: "io_failed" }));
    expect(JSON.parse(readFileSync(marker, "utf8"))).toMatchObject({ version: 1 });
    const store = open(dir, io);
    expect(JSON.parse(readFileSync(marker, "utf8"))).toMatchObject({ version: 2 });
    expect(existsSync(path.join(leases, "held.json"))).toBe(false);
    expect(await value(store.leases.current("held"))).toEqual({ name: "held", ...state });
  });
});

describe("lease tokens across machine restarts", () => {
  it("ends every lease of an earlier boot at a restart: its fences fail, even where a crash rolled its state back, and new tokens are above all old ones", async () => {
    const dir = tempDir();
    const boot = { id: "boot-a" };
    const { io } = testIo(boot);
    const before = open(dir, io);
    const first = await value(before.leases.acquire("l", "alice", { ttlMs: 60_000 }));
    expect(first.token).toBe(1);
    // What a power loss may roll the lease back to: its changes since were never fsynced.
    const onDisk = entryOf(dir, "l");
    await value(before.leases.release(first));
    const second = await value(before.leases.acquire("l", "bob", { ttlMs: 60_000 }));
    expect(second.token).toBe(2);
    await value(before.docs.put(["d"], "bob's", { create: true, fence: { lease: "l", token: second.token } }));
    await before.close();

    // The machine loses power: the lease is back at alice's hold (not expired by the clock);
    // the documents, fsynced, are not rolled back. Then the machine boots again.
    renameSync(path.join(leaseDirectory(dir, "l"), entryOf(dir, "l")), path.join(leaseDirectory(dir, "l"), onDisk));
    boot.id = "boot-b";
    const after = open(dir, io);
    // A write right after the restart with the fence the rolled-back state names fails...
    expect((await failure(after.docs.put(["d"], "alice's", { expectedVersion: 1, fence: { lease: "l", token: first.token } }))).code).toBe("lease_lost");
    expect((await failure(after.logs.append(["log"], [{ id: "a", value: 1 }], { fence: { lease: "l", token: first.token } }))).code).toBe("lease_lost");
    // ...the lease is free at once (its holders died with the machine)...
    expect(await value(after.leases.current("l"))).toBeUndefined();
    const third = await value(after.leases.acquire("l", "carol", { ttlMs: 60_000 }));
    // ...and its next token is above every token handed out before the restart.
    expect(third.token).toBe(EPOCH_SPAN + 1);
    for (const token of [first.token, second.token]) {
      expect((await failure(after.docs.put(["d"], "stale", { expectedVersion: 1, fence: { lease: "l", token } }))).code).toBe("lease_lost");
    }
    expect(await value(after.docs.put(["d"], "carol's", { expectedVersion: 1, fence: { lease: "l", token: third.token } }))).toMatchObject({ version: 2 });
    expect(JSON.parse(readFileSync(path.join(dir, "_keel", "boot.json"), "utf8"))).toMatchObject({ format: "keel.boot.v1", boot: "boot_id:boot-b", epoch: 1 });

    // Within one boot, tokens stay dense across instances and leases, and the epoch is bumped once.
    const again = open(dir, io);
    await value(after.leases.release(third));
    expect((await value(again.leases.acquire("l", "dave", { ttlMs: 60_000 }))).token).toBe(EPOCH_SPAN + 2);
    expect((await value(again.leases.acquire("other", "dave", { ttlMs: 60_000 }))).token).toBe(EPOCH_SPAN + 1);
  });

  it("keeps a lease held by a live holder across store instances of one boot (no epoch change without a restart)", async () => {
    const dir = tempDir();
    const clock = createManualClock();
    const { io } = testIo({ id: "boot-a" });
    const lease = await value(open(dir, io, { clock }).leases.acquire("l", "alice", { ttlMs: 60_000 }));
    const other = open(dir, io, { clock });
    expect((await failure(other.leases.acquire("l", "bob", { ttlMs: 60_000 }))).code).toBe("lease_held");
    expect(await value(other.docs.put(["d"], 1, { create: true, fence: { lease: "l", token: lease.token } }))).toMatchObject({ version: 1 });
    clock.advance(60_001);
    expect((await value(other.leases.acquire("l", "bob", { ttlMs: 60_000 }))).token).toBe(lease.token + 1);
  });

  it("fails closed on a damaged boot record: acquisitions answer corrupt and check() reports it", async () => {
    const dir = tempDir();
    const { io } = testIo({ id: "boot-a" });
    await value(open(dir, io).leases.acquire("l", "alice", { ttlMs: 60_000 }));
    const record = path.join(dir, "_keel", "boot.json");
    writeFileSync(record, readFileSync(record, "utf8").replace('"epoch": 0', '"epoch": 7'));
    const store = open(dir, io);
    expect((await failure(store.leases.acquire("l", "bob", { ttlMs: 60_000 }))).code).toBe("corrupt");
    expect((await value(store.check())).problems).toEqual([expect.objectContaining({ code: "corrupt", location: record })]);
  });
});
