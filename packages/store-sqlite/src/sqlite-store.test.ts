import { existsSync } from "node:fs";
import path from "node:path";
import { errOf, okValue, useTempDirs } from "@keel/testkit";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createSqliteStore, SQLITE_SCHEMA_VERSION } from "./index.js";

const dirs = useTempDirs("keel-sqlite-");
const freshFile = () => path.join(dirs.dir(), "keel.db");
/** A thrown `KeelError` with `code`, for `toThrow`. */
const keelError = (code: string) => expect.objectContaining({ name: "KeelError", code });

describe("createSqliteStore", () => {
  it("opens in WAL with synchronous FULL, and reports fsync durability (memory with normal)", async () => {
    const file = freshFile();
    const store = createSqliteStore({ file });
    const raw = new Database(file);
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
    expect(store.capabilities).toMatchObject({ scope: "host", durability: "fsync" });
    await store.close();
    const normal = createSqliteStore({ file, synchronous: "normal" });
    expect(normal.capabilities.durability).toBe("memory");
    await normal.close();
  });

  it("migrates idempotently: reopening and migrate() again change nothing and keep the data", async () => {
    const file = freshFile();
    const first = createSqliteStore({ file });
    await okValue(first.docs.put(["d"], { kept: true }, { create: true }));
    expect(await okValue(first.migrate())).toEqual({ from: SQLITE_SCHEMA_VERSION, to: SQLITE_SCHEMA_VERSION });
    await first.close();
    const second = createSqliteStore({ file, migrate: false });
    expect((await okValue(second.docs.get(["d"])))?.value).toEqual({ kept: true });
    await second.close();
  });

  it("refuses a newer schema with unsupported, at open and with migrate: false, leaving it untouched", async () => {
    const file = freshFile();
    (await createSqliteStore({ file }).close());
    const raw = new Database(file);
    raw.prepare("UPDATE keel_schema SET version = ?").run(SQLITE_SCHEMA_VERSION + 1);
    raw.close();
    expect(() => createSqliteStore({ file })).toThrow(keelError("unsupported"));
    expect(() => createSqliteStore({ file, migrate: false })).toThrow(keelError("unsupported"));
    const after = new Database(file);
    expect(after.prepare("SELECT version FROM keel_schema").get()).toEqual({ version: SQLITE_SCHEMA_VERSION + 1 });
    after.close();
  });

  it("refuses an unmigrated file when asked not to migrate, creating no file", () => {
    const file = freshFile();
    expect(() => createSqliteStore({ file, migrate: false })).toThrow(keelError("unsupported"));
    expect(existsSync(file)).toBe(false);
  });

  it("refuses bad options at construction", () => {
    expect(() => createSqliteStore({ file: "" })).toThrow(keelError("invalid_input"));
    expect(() => createSqliteStore({ file: freshFile(), synchronous: "off" as never })).toThrow(keelError("invalid_input"));
    expect(() => createSqliteStore({ file: freshFile(), extra: 1 } as never)).toThrow(keelError("invalid_input"));
    // The store creates no directories: a file in a missing one is not_found, and nothing is made.
    const missing = path.join(freshFile(), "no", "such", "dir.db");
    expect(() => createSqliteStore({ file: missing })).toThrow(keelError("not_found"));
    expect(existsSync(path.dirname(path.dirname(missing)))).toBe(false);
  });

  it("fails closed on a damaged value: get and read are corrupt with the location, check reports it", async () => {
    const file = freshFile();
    const store = createSqliteStore({ file });
    await okValue(store.docs.put(["missions", "m1"], { ok: 1 }, { create: true }));
    await okValue(store.logs.append(["runs", "r1"], [{ id: "a", value: 1 }, { id: "b", value: 2 }]));
    const raw = new Database(file);
    raw.prepare("UPDATE keel_docs SET value = '{\"torn' WHERE key = ?").run("missions\u001fm1");
    raw.prepare("UPDATE keel_log_records SET value = 'nope' WHERE seq = 2").run();
    raw.close();
    const doc = await errOf(store.docs.get(["missions", "m1"]));
    expect(doc.code).toBe("corrupt");
    expect(doc.details.location).toBe(`${file}#docs/missions/m1`);
    expect((await errOf(store.logs.read(["runs", "r1"]))).code).toBe("corrupt");
    const report = await okValue(store.check({ repair: true }));
    expect(report.ok).toBe(false);
    expect(report.problems.map((problem) => [problem.code, problem.location])).toEqual([
      ["corrupt", `${file}#docs/missions/m1`],
      ["corrupt", `${file}#logs/runs/r1@2`],
    ]);
    await store.close();
  });

  it("waits for another connection's write transaction instead of failing with SQLITE_BUSY", async () => {
    const file = freshFile();
    const store = createSqliteStore({ file });
    const short = createSqliteStore({ file, busyTimeoutMs: 30 });
    const blocker = new Database(file);
    blocker.exec("BEGIN IMMEDIATE");
    const pending = store.docs.put(["d"], 1, { create: true });
    const elsewhere = store.docs.get(["d"]);
    // The other connection commits later; meanwhile this process's event loop keeps running.
    setTimeout(() => blocker.exec("COMMIT"), 150);
    expect(await okValue(elsewhere)).toBeUndefined();
    expect((await okValue(pending)).version).toBe(1);
    blocker.exec("BEGIN IMMEDIATE");
    const busy = await errOf(short.docs.put(["e"], 1, { create: true }));
    expect(busy.code).toBe("unavailable");
    expect(busy.retryable).toBe(true);
    blocker.exec("ROLLBACK");
    blocker.close();
    await short.close();
    await store.close();
  });
});
