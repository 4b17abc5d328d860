import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { KeelError } from "@keel/core";
import { errOf, okValue } from "@keel/testkit";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createSqliteStore, SQLITE_SCHEMA_VERSION } from "./index.js";

const made: string[] = [];
const freshFile = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-sqlite-"));
  made.push(dir);
  return path.join(dir, "keel.db");
};
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const thrown = (make: () => unknown): KeelError => {
  try {
    make();
  } catch (error) {
    if (KeelError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a KeelError to be thrown");
};

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
    expect(thrown(() => createSqliteStore({ file })).code).toBe("unsupported");
    expect(thrown(() => createSqliteStore({ file, migrate: false })).code).toBe("unsupported");
    const after = new Database(file);
    expect(after.prepare("SELECT version FROM keel_schema").get()).toEqual({ version: SQLITE_SCHEMA_VERSION + 1 });
    after.close();
  });

  it("refuses an unmigrated file when asked not to migrate", () => {
    expect(thrown(() => createSqliteStore({ file: freshFile(), migrate: false })).code).toBe("unsupported");
  });

  it("refuses bad options at construction", () => {
    expect(thrown(() => createSqliteStore({ file: "" })).code).toBe("invalid_input");
    expect(thrown(() => createSqliteStore({ file: freshFile(), synchronous: "off" as never })).code).toBe("invalid_input");
    expect(thrown(() => createSqliteStore({ file: freshFile(), extra: 1 } as never)).code).toBe("invalid_input");
    expect(thrown(() => createSqliteStore({ file: path.join(freshFile(), "no", "such", "dir.db") })).code).toBe("io_failed");
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
