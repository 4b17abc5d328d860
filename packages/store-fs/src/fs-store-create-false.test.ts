import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { okValue as value, useTempDirs } from "@keel/testkit";
import { describe, expect, it } from "vitest";
import { expectThrowsKeel } from "../../../test/support/hostile.js";
import { createFsStore } from "./index.js";

const dirs = useTempDirs("keel-fs-create-false-");
const tempDir = () => dirs.dir();

/**
 * Every entry under `dir` (directories included, so a created or removed one shows) with its
 * mode and mtime, and each file's size and content: equal hashes mean nothing was created,
 * changed, renamed or removed. A directory's mtime is kept in: a read of a store opened with
 * `create: false` takes no lock, so not even a lock token comes and goes.
 */
function treeHash(dir: string): string {
  const hash = createHash("sha256");
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const full = path.join(current, name);
      const info = lstatSync(full);
      hash.update(`${path.relative(dir, full)}\0${info.mode}\0`);
      if (info.isSymbolicLink()) hash.update(readlinkSync(full));
      else if (info.isDirectory()) {
        hash.update(`${info.mtimeMs}\0`);
        walk(full);
      }
      else hash.update(`${info.size}\0${info.mtimeMs}\0`).update(readFileSync(full));
    }
  };
  if (existsSync(dir)) walk(dir);
  else hash.update("absent");
  return hash.digest("hex");
}

async function writeStore(dir: string): Promise<void> {
  const store = createFsStore({ dir });
  await value(store.docs.put(["missions", "m1"], { objective: "ship" }, { create: true }));
  await value(store.logs.append(["runs", "r1"], [{ id: "call-0", value: { ok: true } }]));
  const lease = await value(store.leases.acquire("mission-m1", "worker-1", { ttlMs: 60_000 }));
  await value(store.leases.release(lease));
  await store.close();
}

describe("createFsStore({ create: false })", () => {
  it("is not_found for a missing directory and creates nothing, not even its parent", () => {
    const parent = tempDir();
    const dir = path.join(parent, "absent", "store");
    const before = treeHash(parent);
    expectThrowsKeel(() => createFsStore({ dir, create: false }), ["not_found"]);
    expect(treeHash(parent)).toBe(before);
    expect(existsSync(path.join(parent, "absent"))).toBe(false);
  });

  it("is not_found for a path that is a file, an empty directory and a directory without the marker", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "plain"), "x");
    mkdirSync(path.join(dir, "empty"));
    mkdirSync(path.join(dir, "unmarked", "_keel", "locks"), { recursive: true });
    writeFileSync(path.join(dir, "unmarked", "notes.json"), "{}");
    const before = treeHash(dir);
    for (const name of ["plain", "empty", "unmarked"]) {
      const error = expectThrowsKeel(() => createFsStore({ dir: path.join(dir, name), create: false }), ["not_found"]);
      expect(error.message, name).toContain("nothing was created");
    }
    expect(treeHash(dir)).toBe(before);
  });

  it("refuses a torn or empty marker (corrupt) and an older layout (unsupported), changing nothing; create: true then mends them", async () => {
    const dir = tempDir();
    await writeStore(dir);
    const marker = path.join(dir, "_keel", "store.json");
    const good = readFileSync(marker);
    for (const [bytes, code] of [
      ["", "corrupt"],
      ['{"format":"keel.fs-st', "corrupt"],
      [JSON.stringify({ format: "keel.fs-store", version: 1 }), "unsupported"],
      [JSON.stringify({ format: "keel.fs-store", version: 99 }), "unsupported"],
      [JSON.stringify({ format: "something-else", version: 2 }), "corrupt"],
    ] as const) {
      writeFileSync(marker, bytes);
      const before = treeHash(dir);
      const error = expectThrowsKeel(() => createFsStore({ dir, create: false }), [code]);
      expect(treeHash(dir), bytes).toBe(before);
      if (bytes.length < 30) expect(error.message).toContain("create: true");
    }
    writeFileSync(marker, '{"format":"keel.fs-st');
    await createFsStore({ dir }).close();
    expect(readFileSync(marker)).toEqual(good);
    const reopened = createFsStore({ dir, create: false });
    expect((await value(reopened.docs.get(["missions", "m1"])))?.value).toEqual({ objective: "ship" });
    await reopened.close();
  });

  it("refuses a symbolic link where _keel should be (corrupt) without following it", async () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    await writeStore(elsewhere);
    mkdirSync(path.join(dir, "store"));
    symlinkSync(path.join(elsewhere, "_keel"), path.join(dir, "store", "_keel"));
    const before = treeHash(dir);
    const beforeElsewhere = treeHash(elsewhere);
    expectThrowsKeel(() => createFsStore({ dir: path.join(dir, "store"), create: false }), ["corrupt"]);
    expect(treeHash(dir)).toBe(before);
    expect(treeHash(elsewhere)).toBe(beforeElsewhere);
  });

  it("opens an existing store without changing anything, reads it, then writes like create: true", async () => {
    const dir = tempDir();
    await writeStore(dir);
    const before = treeHash(dir);
    const store = createFsStore({ dir, create: false });
    expect(treeHash(dir)).toBe(before);
    expect((await value(store.docs.get(["missions", "m1"])))?.value).toEqual({ objective: "ship" });
    expect((await value(store.docs.list([]))).items.map((item) => item.key)).toEqual([["missions", "m1"]]);
    expect((await value(store.logs.read(["runs", "r1"]))).map((record) => record.id)).toEqual(["call-0"]);
    expect((await value(store.logs.head(["runs", "r1"])))).toEqual({ lastSeq: 1 });
    expect((await value(store.leases.current("mission-m1")))).toBeUndefined();
    expect((await value(store.check())).ok).toBe(true);
    expect(treeHash(dir)).toBe(before);

    await value(store.docs.put(["missions", "m2"], { objective: "more" }, { create: true }));
    await value(store.logs.append(["runs", "r1"], [{ id: "call-1", value: { ok: true } }]));
    const lease = await value(store.leases.acquire("mission-m2", "worker-1", { ttlMs: 60_000 }));
    await value(store.leases.release(lease));
    await store.close();
    const reopened = createFsStore({ dir, create: false });
    expect((await value(reopened.docs.get(["missions", "m2"])))?.value).toEqual({ objective: "more" });
    expect((await value(reopened.logs.head(["runs", "r1"])))).toEqual({ lastSeq: 2 });
    await reopened.close();
  });

  it("makes a lost locks or leases directory at the first write, not at open", async () => {
    const dir = tempDir();
    await writeStore(dir);
    rmSync(path.join(dir, "_keel", "locks"), { recursive: true });
    rmSync(path.join(dir, "_keel", "leases"), { recursive: true });
    const before = treeHash(dir);
    const store = createFsStore({ dir, create: false });
    expect((await value(store.docs.get(["missions", "m1"])))?.value).toEqual({ objective: "ship" });
    expect(await value(store.leases.current("mission-m1"))).toBeUndefined();
    expect(treeHash(dir)).toBe(before);
    await value(store.docs.put(["missions", "m1"], { objective: "again" }, { expectedVersion: 1 }));
    const lease = await value(store.leases.acquire("mission-m1", "worker-1", { ttlMs: 60_000 }));
    expect(lease.holder).toBe("worker-1");
    expect(existsSync(path.join(dir, "_keel", "leases"))).toBe(true);
    expect((await value(store.check())).problems).toEqual([]);
    await store.close();
  });

  it("validates create like every option, and keeps create: true as the default", async () => {
    const dir = tempDir();
    for (const create of ["false", 0, null]) {
      expectThrowsKeel(() => createFsStore({ dir, create } as never), ["invalid_input"]);
    }
    const fresh = path.join(dir, "fresh");
    await createFsStore({ dir: fresh, create: true }).close();
    expect(existsSync(path.join(fresh, "_keel", "store.json"))).toBe(true);
    await createFsStore({ dir: fresh, create: false }).close();
  });
});
