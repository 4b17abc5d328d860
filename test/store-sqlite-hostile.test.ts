/**
 * What a hostile or careless caller can do to `@keel/store-sqlite` through its public API: the
 * factory's options (every field swapped for a wrong value, NUL in the path, a path that is a
 * link, a FIFO or in a missing directory) and every port method (one argument swapped for a
 * hostile one, answered as the memory store answers). Each refusal is a `KeelError` and writes
 * nothing: no file is created, no byte of an existing one changes.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { systemClock } from "@keel/core";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { MAX_DURATION_MS } from "@keel/store/kit";
import { createSqliteStore, type SqliteStoreOptions } from "@keel/store-sqlite";
import { errOf, okValue, useTempDirs } from "@keel/testkit";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expectThrowsKeel, withHostileField } from "./support/hostile.js";
import { checkPortsAgainstReference } from "./support/store-hostile.js";

const dirs = useTempDirs("keel-sqlite-hostile-");

function open(options: SqliteStoreOptions): KeelStore {
  const store = createSqliteStore(options);
  dirs.track(store);
  return store;
}

/** Whether a field of the options holds a value the factory must accept (the test's own oracle, written from the docs). */
const acceptable: Record<string, (value: unknown) => boolean> = {
  create: (value) => value === undefined || typeof value === "boolean",
  synchronous: (value) => value === undefined || value === "full" || value === "normal",
  busyTimeoutMs: (value) => value === undefined || (Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_DURATION_MS),
  migrate: (value) => value === undefined || typeof value === "boolean",
  maxValueBytes: (value) => value === undefined || (Number.isSafeInteger(value) && (value as number) > 0 && (value as number) <= 1e9),
  clock: (value) => value === undefined || typeof (value as { now?: unknown } | null)?.now === "function",
};

/** A path the factory must refuse whatever the disk holds. */
const unusablePath = (file: string) => file === "" || file === ":memory:" || file.length > 4096 || /[\u0000-\u001f\u007f]/.test(file) || /[\uD800-\uDFFF]/.test(file.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ""));

describe("createSqliteStore given hostile options", () => {
  it("throws invalid_input at once for a wrong value in any field, an unknown or prototype key, and creates nothing", () => {
    fc.assert(
      fc.property(withHostileField({ file: "keel.db", create: true, synchronous: "full", busyTimeoutMs: 100, migrate: true, maxValueBytes: 1024, clock: systemClock }), (variant) => {
        const dir = dirs.dir();
        // A path that is merely another path (`/abs`, `../x`) would be opened where it points: the
        // property swaps in only paths no file may have (NUL, a lone surrogate, empty, huge); the others are the tests below.
        const file = typeof variant.file === "string" && !unusablePath(variant.file) ? path.join(dir, "keel.db") : variant.file;
        const options: Record<string, unknown> = { ...variant, file };
        const valid = Object.keys(options).every((key) => key === "file" ? options.file === path.join(dir, "keel.db") : Object.hasOwn(acceptable, key) && acceptable[key]!(options[key]));
        if (valid) {
          // Still valid (an optional field left out, or another allowed value): the store opens,
          // or, for create: false or migrate: false on a new file, refuses with not_found or unsupported.
          try {
            void open(options as unknown as SqliteStoreOptions);
          } catch (error) {
            expect(["not_found", "unsupported"]).toContain((error as { code?: unknown }).code);
            expect(readdirSync(dir)).toEqual([]);
          }
          return;
        }
        expectThrowsKeel(() => open(options as unknown as SqliteStoreOptions));
        expect(readdirSync(dir)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses a NUL or other control character, or a lone surrogate, anywhere in the path: the file it names would be another", () => {
    const dir = dirs.dir();
    for (const file of [path.join(dir, "a\0b.db"), `${path.join(dir, "a.db")}\0`, path.join(dir, "x\0", "y.db"), path.join(dir, "a\nb.db"), path.join(dir, "a\u007fb.db"), path.join(dir, "\uD800.db"), path.join(dir, "a\uDC00")]) {
      expectThrowsKeel(() => open({ file }));
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses a huge path, an empty one and ':memory:' (not shared between connections)", () => {
    const dir = dirs.dir();
    for (const file of ["", ":memory:", path.join(dir, "x".repeat(5000))]) expectThrowsKeel(() => open({ file }));
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses numbers out of range in every numeric field", () => {
    const file = path.join(dirs.dir(), "keel.db");
    for (const busyTimeoutMs of [-1, 0.5, MAX_DURATION_MS + 1, Number.MAX_SAFE_INTEGER, Number.NaN, Number.POSITIVE_INFINITY]) expectThrowsKeel(() => open({ file, busyTimeoutMs }));
    for (const maxValueBytes of [0, -1, 1.5, 1e9 + 1, Number.MAX_VALUE, Number.NaN]) expectThrowsKeel(() => open({ file, maxValueBytes }));
    expect(existsSync(file)).toBe(false);
  });

  it("answers not_found for a file in a missing directory, and creates no directory (the store never makes one)", () => {
    const dir = dirs.dir();
    expect(expectThrowsKeel(() => open({ file: path.join(dir, "missing", "deeper", "keel.db") }), ["not_found"]).details).toMatchObject({ directory: path.join(dir, "missing", "deeper") });
    // A path through a regular file is a missing directory too.
    writeFileSync(path.join(dir, "plain"), "x");
    expectThrowsKeel(() => open({ file: path.join(dir, "plain", "keel.db") }), ["not_found"]);
    expect(readdirSync(dir)).toEqual(["plain"]);
  });
});

describe("the SQLite store's path when it is a link or not a file", () => {
  it("follows a link to an existing database (the user named it, as the fs store's root), writing at its target", async () => {
    const real = path.join(dirs.dir(), "real.db");
    await open({ file: real }).close();
    const link = path.join(dirs.dir(), "link.db");
    symlinkSync(real, link);
    await okValue(open({ file: link }).docs.put(["d"], 1, { create: true }));
    const check = new Database(real, { readonly: true });
    expect(check.prepare("SELECT count(*) AS n FROM keel_docs").get()).toEqual({ n: 1 });
    check.close();
  });

  it("refuses a link to nothing: opening it would create a file at the link's target, outside", () => {
    const outside = dirs.dir();
    const dir = dirs.dir();
    const link = path.join(dir, "keel.db");
    symlinkSync(path.join(outside, "planted.db"), link);
    expectThrowsKeel(() => open({ file: link }));
    expect(readdirSync(outside)).toEqual([]);
  });

  it("refuses a directory, a FIFO and a device (SQLite would block on a FIFO, or read zeros), through a link too", () => {
    const dir = dirs.dir();
    mkdirSync(path.join(dir, "adir"));
    execFileSync("mkfifo", [path.join(dir, "fifo")]);
    symlinkSync("/dev/zero", path.join(dir, "zero.db"));
    symlinkSync(path.join(dir, "adir"), path.join(dir, "dirlink.db"));
    for (const name of ["adir", "fifo", "zero.db", "dirlink.db"]) expectThrowsKeel(() => open({ file: path.join(dir, name) }));
    expect(readdirSync(dir).sort()).toEqual(["adir", "dirlink.db", "fifo", "zero.db"]);
    expect(readdirSync(path.join(dir, "adir"))).toEqual([]);
  });
});

describe("createSqliteStore with create: false (what reading tools open)", () => {
  it("answers not_found for a missing file and creates none", () => {
    const file = path.join(dirs.dir(), "keel.db");
    expectThrowsKeel(() => open({ file, create: false }), ["not_found"]);
    expectThrowsKeel(() => open({ file, create: false, migrate: false }), ["not_found"]);
    expect(existsSync(file)).toBe(false);
  });

  it("answers not_found for a SQLite file that holds no Keel store, and leaves its bytes as they were", () => {
    const file = path.join(dirs.dir(), "other.db");
    const other = new Database(file);
    other.exec("CREATE TABLE mine (x INTEGER)");
    other.close();
    const before = readFileSync(file);
    expectThrowsKeel(() => open({ file, create: false, migrate: false }), ["not_found"]);
    expectThrowsKeel(() => open({ file, create: false }), ["not_found"]);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(path.dirname(file))).toEqual(["other.db"]);
  });

  it("opens an existing store and reads it", async () => {
    const file = path.join(dirs.dir(), "keel.db");
    const writer = open({ file });
    await okValue(writer.docs.put(["d"], { kept: true }, { create: true }));
    const reader = open({ file, create: false, migrate: false });
    expect((await okValue(reader.docs.get(["d"])))?.value).toEqual({ kept: true });
  });
});

describe("the SQLite store's ports given hostile arguments", () => {
  it("answers every method as the memory store does, typed, and a refusal writes nothing", async () => {
    const store = open({ file: path.join(dirs.dir(), "keel.db") });
    await checkPortsAgainstReference(store, createMemoryStore(), 400);
  });

  it("refuses a list cursor with NUL, and keys, log names and record ids with NUL, before anything is read or written", async () => {
    const store = open({ file: path.join(dirs.dir(), "keel.db") });
    await okValue(store.docs.put(["a"], 1, { create: true }));
    for (const after of ["a\0", "\0", "a/b\0c", "x".repeat(5000)]) {
      expect((await errOf(store.docs.list([], { after }))).code).toBe("invalid_input");
      expect((await errOf(store.docs.readPage!([], { after }))).code).toBe("invalid_input");
    }
    expect((await errOf(store.docs.put(["a\0b"], 1, { create: true }))).code).toBe("invalid_input");
    expect((await errOf(store.logs.append(["l\0"], [{ id: "r", value: 1 }]))).code).toBe("invalid_input");
    expect((await errOf(store.logs.append(["l"], [{ id: "r\0", value: 1 }]))).code).toBe("invalid_input");
    expect((await errOf(store.leases.acquire("l", "h\0", { ttlMs: 1000 }))).code).toBe("invalid_input");
    expect((await errOf(store.docs.put(["b"], 1, { create: true, fence: { lease: "l\0", token: 1 } }))).code).toBe("lease_lost");
    expect((await okValue(store.docs.list([]))).items.map((item) => item.key)).toEqual([["a"]]);
    expect(await okValue(store.logs.list([]))).toEqual([]);
  });

  it("stores prototype keys in values as data (own keys back, no prototype changed), and refuses a huge value with too_large", async () => {
    const store = open({ file: path.join(dirs.dir(), "keel.db"), maxValueBytes: 1024 });
    const value = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}') as Record<string, unknown>;
    await okValue(store.docs.put(["p"], value as never, { create: true }));
    const read = (await okValue(store.docs.get(["p"])))!.value as Record<string, unknown>;
    expect(Object.hasOwn(read, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await errOf(store.docs.put(["big"], "x".repeat(2000), { create: true }))).code).toBe("too_large");
    expect((await errOf(store.logs.append(["big"], [{ id: "r", value: "x".repeat(2000) }]))).code).toBe("too_large");
    expect(await okValue(store.docs.get(["big"]))).toBeUndefined();
    expect(await okValue(store.logs.head(["big"]))).toBeUndefined();
  });
});
