/**
 * What a hostile or careless caller can do to the stores through their public API: one test per
 * cause found by a corpus of bad inputs. Each runs against the memory store and the filesystem
 * store (real files), and through `createRoleSessions` where the cause reached it.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, statSync, symlinkSync } from "node:fs";
import path from "node:path";
import { createRoleSessions } from "@keel/sessions";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { MAX_DURATION_MS } from "@keel/store/kit";
import { createFsStore } from "@keel/store-fs";
import { errOf, okValue, useTempDirs } from "@keel/testkit";
import { describe, expect, it } from "vitest";

const dirs = useTempDirs("keel-hostile-");

const targets: [string, () => KeelStore][] = [
  ["memory", () => createMemoryStore()],
  ["fs", () => createFsStore({ dir: dirs.dir() })],
];

describe.each(targets)("a careless caller of the %s store", (_name, make) => {
  const open = () => {
    const store = make();
    dirs.track(store);
    return store;
  };

  it("cannot pass a duration that overflows a timer or a Date: each is invalid_input, and a competing acquire is lease_held", async () => {
    const store = open();
    for (const ttlMs of [Number.MAX_SAFE_INTEGER, MAX_DURATION_MS + 1, 8.64e15]) {
      expect((await errOf(store.leases.acquire("l", "a", { ttlMs }))).code).toBe("invalid_input");
    }
    expect((await errOf(store.leases.acquire("l", "a", { ttlMs: 1000, waitMs: MAX_DURATION_MS + 1 }))).code).toBe("invalid_input");
    const held = await okValue(store.leases.acquire("l", "a", { ttlMs: MAX_DURATION_MS }));
    expect((await errOf(store.leases.renew(held, { ttlMs: Number.MAX_SAFE_INTEGER }))).code).toBe("invalid_input");
    // The longest accepted lease is still readable, and a competitor gets a typed error, not a RangeError.
    expect(await okValue(store.leases.current("l"))).toMatchObject({ holder: "a", token: held.token });
    expect((await errOf(store.leases.acquire("l", "b", { ttlMs: 1000 }))).code).toBe("lease_held");
    // A forged expiresAt cannot push a renewal out of range either.
    const renewed = await okValue(store.leases.renew({ ...held, expiresAt: Number.MAX_VALUE }));
    expect(renewed.expiresAt - Date.now()).toBeLessThanOrEqual(MAX_DURATION_MS);
    expect((await errOf(store.leases.acquire("l", "b", { ttlMs: 1000 }))).code).toBe("lease_held");
  });

  it("cannot create or bring back a log with an empty append", async () => {
    const store = open();
    expect(await okValue(store.logs.append(["runs", "r"], []))).toEqual({ lastSeq: 0, appended: 0, deduplicated: 0 });
    expect(await okValue(store.logs.head(["runs", "r"]))).toBeUndefined();
    expect(await okValue(store.logs.list([]))).toEqual([]);
    await okValue(store.logs.append(["runs", "r"], [{ id: "a", value: 1 }]));
    expect(await okValue(store.logs.append(["runs", "r"], [], { expectedSeq: 1 }))).toEqual({ lastSeq: 1, appended: 0, deduplicated: 0 });
    expect((await errOf(store.logs.append(["runs", "r"], [], { expectedSeq: 5 }))).code).toBe("conflict");
    await okValue(store.logs.delete(["runs", "r"]));
    expect(await okValue(store.logs.append(["runs", "r"], []))).toEqual({ lastSeq: 0, appended: 0, deduplicated: 0 });
    expect(await okValue(store.logs.head(["runs", "r"]))).toBeUndefined();
    expect(await okValue(store.logs.list(["runs"]))).toEqual([]);
  });

  it("leaves symbol-keyed properties out of stored values, as JSON.stringify does, while undefined is refused", async () => {
    const store = open();
    const tag = Symbol("tag");
    const value = { a: 1, nested: { b: 2, [tag]: "hidden" }, [tag]: "hidden" };
    const stored = await okValue(store.docs.put(["d"], value as never, { create: true }));
    expect(stored.value).toEqual({ a: 1, nested: { b: 2 } });
    expect(Object.getOwnPropertySymbols(stored.value)).toEqual([]);
    expect((await okValue(store.docs.get(["d"])))?.value).toEqual({ a: 1, nested: { b: 2 } });
    await okValue(store.logs.append(["l"], [{ id: "r", value: value as never }]));
    expect((await okValue(store.logs.read(["l"])))[0]?.value).toEqual({ a: 1, nested: { b: 2 } });
    expect((await errOf(store.docs.put(["e"], { a: undefined } as never, { create: true }))).code).toBe("invalid_input");
    expect((await errOf(store.docs.put(["e"], { a: tag } as never, { create: true }))).code).toBe("invalid_input");
  });
});

describe("role sessions given a hostile lease duration", () => {
  it("refuses a ttlMs or waitMs beyond MAX_DURATION_MS at construction (no timer overflow)", () => {
    const store = createMemoryStore();
    for (const lease of [{ ttlMs: Number.MAX_SAFE_INTEGER }, { ttlMs: MAX_DURATION_MS + 1 }, { waitMs: MAX_DURATION_MS + 1 }, { lingerMs: Number.MAX_SAFE_INTEGER }]) {
      expect(() => createRoleSessions({ store, lease })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    }
    expect(() => createRoleSessions({ store, lease: { ttlMs: MAX_DURATION_MS } })).not.toThrow();
  });
});

describe("the filesystem store's paths", () => {
  it("never follows a symbolic link inside the store: writes and reads through it fail, nothing lands outside, check() reports the link", async () => {
    const dir = dirs.dir();
    const outside = dirs.dir();
    const store = createFsStore({ dir });
    dirs.track(store);
    await okValue(store.docs.put(["plans", "p"], 1, { create: true }));
    symlinkSync(outside, path.join(dir, "missions"));
    for (const outcome of [
      store.docs.put(["missions", "m1", "capsule"], { secret: true }, { create: true }),
      store.docs.get(["missions", "m1", "capsule"]),
      store.logs.append(["missions", "m1", "events"], [{ id: "e", value: 1 }]),
      store.logs.read(["missions", "m1", "events"]),
    ]) {
      const error = await errOf(outcome as never);
      expect(error.code).toBe("corrupt");
      expect(error.details.location).toBe(path.join(dir, "missions"));
    }
    expect(readdirSync(outside)).toEqual([]);
    const report = await okValue(store.check());
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([expect.objectContaining({ code: "link", location: path.join(dir, "missions") })]);
    // Everything else still works, and listing skips the link.
    expect((await okValue(store.docs.list([]))).items.map((item) => item.key)).toEqual([["plans", "p"]]);
  });

  it("opens a store whose own directory is reached through a link (the root is resolved once)", async () => {
    const real = dirs.dir();
    const alias = path.join(dirs.dir(), "alias");
    symlinkSync(real, alias);
    const store = createFsStore({ dir: alias });
    dirs.track(store);
    await okValue(store.docs.put(["a", "b"], 1, { create: true }));
    expect(existsSync(path.join(real, "a", "b.json"))).toBe(true);
  });
});

describe("the filesystem store's file modes", () => {
  const mode = (file: string) => statSync(file).mode & 0o777;

  it("creates files 0600 and directories 0700 by default: capsules and logs hold model output", async () => {
    const dir = path.join(dirs.dir(), "store");
    const store = createFsStore({ dir });
    dirs.track(store);
    await okValue(store.docs.put(["missions", "m1", "role-sessions", "engineer"], { secret: true }, { create: true }));
    await okValue(store.docs.put(["missions", "m1", "role-sessions", "engineer"], { secret: 2 }, { expectedVersion: 1 }));
    await okValue(store.logs.append(["missions", "m1", "events"], [{ id: "e", value: 1 }]));
    await okValue(store.leases.acquire("l", "me", { ttlMs: 1000 }));
    const files: string[] = [];
    const directories: string[] = [];
    const walk = (current: string) => {
      directories.push(current);
      for (const entry of readdirSync(current, { withFileTypes: true })) {
        const full = path.join(current, entry.name);
        if (entry.isDirectory()) walk(full);
        else files.push(full);
      }
    };
    walk(dir);
    expect(files.some((file) => file.endsWith("engineer.json.bak"))).toBe(true);
    expect(files.some((file) => file.endsWith("events.jsonl"))).toBe(true);
    for (const file of files) expect([file, mode(file)]).toEqual([file, 0o600]);
    for (const directory of directories) expect([directory, mode(directory)]).toEqual([directory, 0o700]);
  });

  it("shares them when asked (fileMode, directoryMode), and refuses a mode that is not permission bits", async () => {
    const previous = process.umask(0o022);
    try {
      const dir = path.join(dirs.dir(), "store");
      const store = createFsStore({ dir, fileMode: 0o644, directoryMode: 0o755 });
      dirs.track(store);
      await okValue(store.docs.put(["shared", "d"], 1, { create: true }));
      expect(mode(path.join(dir, "shared", "d.json"))).toBe(0o644);
      expect(mode(path.join(dir, "shared"))).toBe(0o755);
      expect(lstatSync(dir).isDirectory()).toBe(true);
    } finally {
      process.umask(previous);
    }
    expect(() => createFsStore({ dir: dirs.dir(), fileMode: 0o1777 })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    const untouched = path.join(dirs.dir(), "never");
    mkdirSync(path.dirname(untouched), { recursive: true });
    expect(() => createFsStore({ dir: untouched, directoryMode: -1 })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(existsSync(untouched)).toBe(false);
  });
});
