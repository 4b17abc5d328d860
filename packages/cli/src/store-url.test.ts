import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createScriptedBackend } from "@keel/backends/scripted";
import { copyStore, runCli } from "@keel/cli";
import { createKeel, openStore } from "@keel/runtime";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createSqliteStore } from "@keel/store-sqlite";
import type { KeelError } from "@keel/core";
import type { Result } from "neverthrow";
import { afterEach, describe, expect, it } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../../store-postgres/test-support/postgres-test-database.js";
import { captureIo } from "../../../test/support/cli-harness.js";

const made: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-store-url-"));
  made.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const unwrap = async <T>(outcome: PromiseLike<Result<T, KeelError>>): Promise<T> => {
  const result = await outcome;
  if (result.isErr()) throw result.error;
  return result.value;
};

/** A store with a document at version 3, a deleted one, and a log that was deleted and begun again (seqs 4, 5). */
async function fill(store: KeelStore): Promise<void> {
  await unwrap(store.docs.put(["missions", "m1"], { n: 1 }, { create: true }));
  await unwrap(store.docs.put(["missions", "m1"], { n: 2 }, { expectedVersion: 1 }));
  await unwrap(store.docs.put(["missions", "m1"], { n: 3, text: "nul\u0000" }, { expectedVersion: 2 }));
  await unwrap(store.docs.put(["gone"], 1, { create: true }));
  await unwrap(store.docs.delete(["gone"], { unconditional: true }));
  await unwrap(store.logs.append(["runs", "r1"], [{ id: "a", value: 1 }, { id: "b", value: 2 }, { id: "c", value: 3 }]));
  await unwrap(store.logs.delete(["runs", "r1"]));
  await unwrap(store.logs.append(["runs", "r1"], [{ id: "d", value: { deep: [4] } }, { id: "e", value: 5 }]));
  await unwrap(store.logs.append(["events"], [{ id: "x", value: "first" }]));
}

async function expectFilled(store: KeelStore): Promise<void> {
  expect(await unwrap(store.docs.get(["missions", "m1"]))).toMatchObject({ value: { n: 3, text: "nul\u0000" }, version: 3 });
  expect(await unwrap(store.docs.get(["gone"]))).toBeUndefined();
  expect((await unwrap(store.docs.list([]))).items.map((item) => item.key)).toEqual([["missions", "m1"]]);
  expect((await unwrap(store.logs.read(["runs", "r1"]))).map((record) => [record.seq, record.id, record.value])).toEqual([
    [4, "d", { deep: [4] }],
    [5, "e", 5],
  ]);
  expect(await unwrap(store.logs.head(["runs", "r1"]))).toEqual({ lastSeq: 5 });
  expect(await unwrap(store.logs.list([]))).toEqual([["events"], ["runs", "r1"]]);
  // Compare-and-swap carries over: the next write expects the copied version.
  expect((await unwrap(store.docs.put(["missions", "m1"], { n: 4 }, { expectedVersion: 3 }))).version).toBe(4);
}

describe("store URLs", () => {
  it("let createKeel run turns in a store openStore of @keel/runtime opens from a URL", async () => {
    const file = path.join(tempDir(), "keel.db");
    const backend = createScriptedBackend({ resumable: true, script: () => "Decision: done" });
    const store = await unwrap(openStore(`sqlite:${file}`));
    const keel = createKeel({ store, backends: [backend] });
    await unwrap(keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Do it.", objective: "Ship" }));
    await keel.close();
    await store.close();
    const reopened = createSqliteStore({ file });
    expect((await unwrap(reopened.docs.list(["missions", "m1"]))).items.length).toBeGreaterThan(0);
    await reopened.close();
    expect(() => createKeel({ store: `sqlite:${file}`, backends: [backend] })).toThrow(/no openStore was given/);
  });
});

describe("keel store copy", () => {
  it("copies documents with their versions and logs with their seqs and ids, fs → SQLite → fs", async () => {
    const dir = tempDir();
    const source = createFsStore({ dir: path.join(dir, "fs") });
    await fill(source);
    await source.close();
    const io = captureIo({ cwd: dir });
    expect(await runCli(["store", "copy", "fs", "sqlite:copy.db"], io)).toBe(0);
    expect(io.out).toMatch(/^copied 1 documents and 2 logs \(3 records\) from fs to sqlite:copy\.db/);
    expect(await runCli(["store", "copy", "sqlite:copy.db", "back"], captureIo({ cwd: dir }))).toBe(0);
    for (const store of [createSqliteStore({ file: path.join(dir, "copy.db") }), createFsStore({ dir: path.join(dir, "back") })]) {
      await expectFilled(store);
      await store.close();
    }
  });

  it("refuses a non-empty target unless --force, and bad arguments with exit code 2", async () => {
    const dir = tempDir();
    const source = createSqliteStore({ file: path.join(dir, "a.db") });
    await unwrap(source.docs.put(["d"], 1, { create: true }));
    await source.close();
    const target = createSqliteStore({ file: path.join(dir, "b.db") });
    await unwrap(target.logs.append(["other"], [{ id: "x", value: 1 }]));
    await target.close();
    const refused = captureIo({ cwd: dir });
    expect(await runCli(["store", "copy", "sqlite:a.db", "sqlite:b.db"], refused)).toBe(1);
    expect(refused.err).toMatch(/\(conflict\): the target store is not empty/);
    expect(await runCli(["store", "copy", "sqlite:a.db", "sqlite:b.db", "--force"], captureIo({ cwd: dir }))).toBe(0);
    expect(await runCli(["store", "copy", "sqlite:a.db"], captureIo({ cwd: dir }))).toBe(2);
    expect(await runCli(["store", "move", "a", "b"], captureIo({ cwd: dir }))).toBe(2);
    expect(await runCli(["store", "copy", "mysql://x/y", "b"], captureIo({ cwd: dir }))).toBe(2);
  });

  it("keel inspect reads a SQLite store by URL, and reports a missing file", async () => {
    const dir = tempDir();
    const store = createSqliteStore({ file: path.join(dir, "k.db") });
    await unwrap(store.docs.put(["missions", "m1", "checkpoint"], { done: [] }, { create: true }));
    await store.close();
    const io = captureIo({ cwd: dir });
    expect(await runCli(["inspect", "sqlite:k.db", "--json"], io)).toBe(0);
    expect(JSON.parse(io.out)).toMatchObject({ dir: "sqlite:k.db", layout: 1 });
    const missing = captureIo({ cwd: dir });
    expect(await runCli(["inspect", "sqlite:none.db"], missing)).toBe(1);
    expect(missing.err).toMatch(/not_found/);
  });
});

describe("keel demo --store", () => {
  it("runs the demo in a SQLite store, and refuses to run it again there without --continue", async () => {
    const dir = tempDir();
    const io = captureIo({ cwd: dir });
    expect(await runCli(["demo", "--dir", "demo", "--store", "sqlite:demo.db", "--policies", "fresh", "--rounds", "1"], io), io.err).toBe(0);
    const store = createSqliteStore({ file: path.join(dir, "demo.db") });
    expect(await unwrap(store.docs.get(["demo", "demo-fresh"]))).toMatchObject({ value: { lastRound: 1 } });
    expect((await unwrap(store.docs.list(["missions", "demo-fresh"]))).items.length).toBeGreaterThan(0);
    await store.close();
    const again = captureIo({ cwd: dir });
    expect(await runCli(["demo", "--dir", "demo", "--store", "sqlite:demo.db", "--policies", "fresh", "--rounds", "1"], again)).toBe(1);
    expect(again.err).toMatch(/already holds a demo/);
    expect(await runCli(["demo", "--dir", "demo", "--store", "sqlite:demo.db", "--policies", "fresh", "--rounds", "1", "--continue"], captureIo({ cwd: dir }))).toBe(0);
  }, 120_000);
});

describeWithPostgres("keel store copy with PostgreSQL", () => {
  it("copies SQLite → PostgreSQL with versions, seqs and ids", async () => {
    const dir = tempDir();
    const schema = freshSchemaName();
    try {
      const source = createSqliteStore({ file: path.join(dir, "a.db") });
      await fill(source);
      await source.close();
      const url = `${testPostgresUrl}?schema=${schema}`;
      expect(await runCli(["store", "copy", "sqlite:a.db", url], captureIo({ cwd: dir }))).toBe(0);
      const copied = await unwrap(openStore(url));
      await expectFilled(copied);
      await copied.close();
      // And the direct API, back into an empty directory store.
      const from = await unwrap(openStore(url));
      const to = createFsStore({ dir: path.join(dir, "fs") });
      expect(await unwrap(copyStore(from, to))).toEqual({ documents: 1, logs: 2, records: 3 });
      await from.close();
      await to.close();
    } finally {
      await dropSchema(schema);
    }
  });
});
