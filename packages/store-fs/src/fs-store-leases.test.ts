import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createManualClock } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { afterEach, describe, expect, it } from "vitest";
import type { FsStoreOptions } from "./fs-store-options.js";
import { nodeFsIo, type FsIo } from "./internal/fs-io.js";
import { EPOCH_SPAN } from "./internal/lease-epoch.js";
import { openFsStore } from "./internal/open-fs-store.js";
import { errOf as failure, okValue as value } from "@keel/testkit";

const BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id";

const made: string[] = [];
const stores: KeelStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-fs-leases-"));
  made.push(dir);
  return dir;
}

/**
 * The real file system, with this machine's boot id chosen by the test (a "reboot" is a new
 * id), fsyncs counted, and the next read of a lease file torn on request (as a read racing an
 * in-place rewrite can be).
 */
function testIo(boot: { id: string }) {
  const counts = { fsync: 0 };
  const leaseFds = new Set<number>();
  const state = { tearNextLeaseRead: false };
  const io: FsIo = {
    ...nodeFsIo,
    readFileSync: (file) => (file === BOOT_ID_FILE ? Buffer.from(`${boot.id}\n`) : nodeFsIo.readFileSync(file)),
    openSync: (file, flags, mode) => {
      const fd = nodeFsIo.openSync(file, flags, mode);
      if (file.includes(`${path.sep}leases${path.sep}`)) leaseFds.add(fd);
      return fd;
    },
    closeSync: (fd) => {
      leaseFds.delete(fd);
      nodeFsIo.closeSync(fd);
    },
    readSync: (fd, buffer, offset, length, position) => {
      const count = nodeFsIo.readSync(fd, buffer, offset, length, position);
      if (state.tearNextLeaseRead && leaseFds.has(fd) && count > 40) {
        state.tearNextLeaseRead = false;
        buffer[offset + 30] = "#".charCodeAt(0);
      }
      return count;
    },
    fsync: (fd) => {
      counts.fsync++;
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
  const store = openFsStore({ dir, ...options }, io);
  stores.push(store);
  return store;
}

const leaseFile = (dir: string, name: string) => path.join(dir, "_keel", "leases", `${name}.json`);

describe("lease state without fsync", () => {
  it("creates a lease file durably once, then rewrites it in place without fsync, one readable JSON object", async () => {
    const dir = tempDir();
    const { io, counts } = testIo({ id: "boot-a" });
    const store = open(dir, io);
    const first = await value(store.leases.acquire("l", "alice", { ttlMs: 60_000 }));
    const file = leaseFile(dir, "l");
    const inode = statSync(file).ino;
    const fsyncs = counts.fsync;
    await value(store.leases.release(first));
    const second = await value(store.leases.acquire("l", "bob", { ttlMs: 60_000 }));
    const renewed = await value(store.leases.renew(second, { ttlMs: 30_000 }));
    expect(counts.fsync).toBe(fsyncs);
    expect(statSync(file).ino).toBe(inode);
    // "bob" is shorter than "alice": the rest of the old text is overwritten with spaces.
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ format: "keel.lease.v1", name: "l", holder: "bob", token: second.token, expiresAt: renewed.expiresAt });
    expect(await value(store.leases.current("l"))).toEqual(renewed);

    // A state that does not fit (a longer holder) replaces the file, durably.
    await value(store.leases.release(renewed));
    const longer = await value(store.leases.acquire("l", "a-holder-with-a-much-longer-name", { ttlMs: 60_000 }));
    expect(counts.fsync).toBeGreaterThan(fsyncs);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ holder: "a-holder-with-a-much-longer-name", token: longer.token });
    expect(longer.token).toBe(second.token + 1);
  });

  it("reads a lease again under its lock when a lock-free read saw a torn rewrite, and only real damage is corrupt", async () => {
    const dir = tempDir();
    const { io, state } = testIo({ id: "boot-a" });
    const store = open(dir, io);
    const lease = await value(store.leases.acquire("l", "alice", { ttlMs: 60_000 }));
    state.tearNextLeaseRead = true;
    expect(await value(store.leases.current("l"))).toEqual(lease);
    expect(state.tearNextLeaseRead).toBe(false);
    state.tearNextLeaseRead = true;
    expect((await value(store.check())).problems).toEqual([]);
    const file = leaseFile(dir, "l");
    writeFileSync(file, readFileSync(file, "utf8").replace('"holder": "alice"', '"holder": "mallo"'));
    expect((await failure(store.leases.current("l"))).code).toBe("corrupt");
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
    // What a power loss may roll the lease file back to: its changes since were never fsynced.
    const onDisk = readFileSync(leaseFile(dir, "l"));
    await value(before.leases.release(first));
    const second = await value(before.leases.acquire("l", "bob", { ttlMs: 60_000 }));
    expect(second.token).toBe(2);
    await value(before.docs.put(["d"], "bob's", { create: true, fence: { lease: "l", token: second.token } }));
    await before.close();

    // The machine loses power: the lease file is back at alice's hold (not expired by the clock);
    // the documents, fsynced, are not rolled back. Then the machine boots again.
    writeFileSync(leaseFile(dir, "l"), onDisk);
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
