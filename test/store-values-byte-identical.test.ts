/**
 * Issue 31 §1: whatever a host stores comes back byte for byte from every store — the same key
 * order, number spelling and strings — so a prompt rebuilt after a restart is the prompt a
 * provider's cache has already seen. A property over random JSON values (key orders, unicode and
 * lone surrogates, large, tiny and negative numbers, nested arrays) on the memory, fs, SQLite and
 * PostgreSQL stores, through documents, batches, logs, and a second handle that read nothing
 * before (so no cache answers); and a retry of a record whose keys come in another order is a
 * duplicate, not a conflict.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { JsonValue } from "@keel/core";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";
import { okValue } from "@keel/testkit";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";

const dirs: string[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  for (const schema of schemas) await dropSchema(schema);
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-bytes-"));
  dirs.push(dir);
  return dir;
}

/** A store and a way to open a second, cold handle on the same data (the same handle for memory). */
interface Target {
  name: string;
  open(): { store: KeelStore; reopen(): KeelStore };
}

const targets: Target[] = [
  {
    name: "memory",
    open: () => {
      const store = createMemoryStore();
      return { store, reopen: () => store };
    },
  },
  {
    name: "fs",
    open: () => {
      const dir = tempDir();
      return { store: createFsStore({ dir }), reopen: () => createFsStore({ dir }) };
    },
  },
  {
    name: "sqlite",
    open: () => {
      const file = path.join(tempDir(), "keel.db");
      return { store: createSqliteStore({ file }), reopen: () => createSqliteStore({ file }) };
    },
  },
];

/** Random JSON: any key order (fast-check builds objects key by key), full unicode strings with lone surrogates, doubles of every size. */
const json: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 4, stringUnit: "binary" }) as fc.Arbitrary<JsonValue>;
const text = (value: unknown) => JSON.stringify(value);

function runProperty(target: Target, runs: number) {
  return async () => {
    const { store, reopen } = target.open();
    const written: [JsonValue, JsonValue][] = [];
    try {
      await fc.assert(
        fc.asyncProperty(json, json, async (doc, record) => {
          const key = [`k${written.length}`];
          written.push([doc, record]);
          await okValue(store.docs.put(key, doc, { create: true }));
          expect(text((await okValue(store.docs.get(key)))?.value)).toBe(text(doc));
          if (store.docs.batch) {
            await okValue(store.docs.batch([{ key: [...key, "b"], value: record, condition: { create: true } }]));
            expect(text((await okValue(store.docs.get([...key, "b"])))?.value)).toBe(text(record));
          }
          await okValue(store.logs.append(key, [{ id: "r", value: record }, { id: "d", value: doc }]));
          const read = await okValue(store.logs.read(key));
          expect(read.map((entry) => text(entry.value))).toEqual([text(record), text(doc)]);
        }),
        { numRuns: runs },
      );
      const cold = reopen();
      try {
        for (const [index, [doc, record]] of written.entries()) {
          const key = [`k${index}`];
          expect(text((await okValue(cold.docs.get(key)))?.value)).toBe(text(doc));
          expect((await okValue(cold.logs.read(key))).map((entry) => text(entry.value))).toEqual([text(record), text(doc)]);
        }
      } finally {
        if (cold !== store) await cold.close();
      }
    } finally {
      await store.close();
    }
  };
}

describe("values come back byte for byte", () => {
  for (const target of targets) {
    it(`${target.name}: documents, batches and log records keep key order, numbers and strings`, runProperty(target, 60), 120_000);
  }

  it("a record retried with its keys in another order is a duplicate on every store, and reads back as first written", async () => {
    for (const target of targets) {
      const { store } = target.open();
      try {
        const first = { tool: "read", args: { path: "src/a.ts", limit: 20 }, at: 1.5e-9 };
        const retry = { at: 1.5e-9, args: { limit: 20, path: "src/a.ts" }, tool: "read" };
        await okValue(store.logs.append(["l"], [{ id: "call-1", value: first }]));
        expect(await okValue(store.logs.append(["l"], [{ id: "call-1", value: retry }]))).toEqual({ lastSeq: 1, appended: 0, deduplicated: 1 });
        expect((await okValue(store.logs.read(["l"]))).map((entry) => text(entry.value))).toEqual([text(first)]);
      } finally {
        await store.close();
      }
    }
  });
});

describeWithPostgres("values come back byte for byte (PostgreSQL)", () => {
  it("postgres: documents, batches and log records keep key order, numbers and strings", async () => {
    const schema = freshSchemaName();
    schemas.push(schema);
    await runProperty(
      {
        name: "postgres",
        open: () => ({
          store: createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 2 }),
          reopen: () => createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 2 }),
        }),
      },
      40,
    )();
  }, 120_000);
});
