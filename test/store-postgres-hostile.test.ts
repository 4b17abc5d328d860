/**
 * What a hostile or careless caller can do to `@keel/store-postgres` through its public API: the
 * factory's options (every field swapped for a wrong value, a system schema, a connection string
 * `pg` would misread) and every port method (one argument swapped for a hostile one, answered as
 * the memory store answers). Each refusal is a `KeelError` and writes nothing: no schema or table
 * is created; a string PostgreSQL text cannot hold (NUL) is refused before any query is sent.
 */
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createPostgresStore, type PostgresStoreOptions } from "@keel/store-postgres";
import { errOf, okValue } from "@keel/testkit";
import fc from "fast-check";
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import { adminQuery, describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";
import { expectThrowsKeel, withHostileField } from "./support/hostile.js";
import { checkPortsAgainstReference } from "./support/store-hostile.js";

const schemas: string[] = [];
const stores: KeelStore[] = [];
const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const pool of pools.splice(0)) await pool.end();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

function open(options: PostgresStoreOptions): KeelStore {
  const store = createPostgresStore(options);
  stores.push(store);
  return store;
}

function fresh(): string {
  const schema = freshSchemaName();
  schemas.push(schema);
  return schema;
}

async function schemaExists(schema: string): Promise<boolean> {
  return (await adminQuery("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema])).length > 0;
}

/** A real pool that counts what reaches the server: connections taken and statements sent. */
function countingPool(): { pool: pg.Pool; sent: () => number } {
  const pool = new pg.Pool({ connectionString: testPostgresUrl, max: 2 });
  pools.push(pool);
  let sent = 0;
  const query = pool.query.bind(pool);
  const connect = pool.connect.bind(pool);
  pool.query = ((...args: unknown[]) => {
    sent++;
    return (query as (...rest: unknown[]) => unknown)(...args);
  }) as typeof pool.query;
  pool.connect = (async () => {
    sent++;
    return connect();
  }) as typeof pool.connect;
  return { pool, sent: () => sent };
}

/** Whether a field of the options holds a value the factory must accept (the test's own oracle, written from the docs). */
const acceptable: Record<string, (value: unknown) => boolean> = {
  // A postgres:// URL, or a socket directory (any absolute path: pg looks for the socket there at first use).
  connectionString: (value) => value === testPostgresUrl || (typeof value === "string" && value.startsWith("/") && !/[\u0000-\u001f\u007f]/.test(value)),
  schema: (value) => value === undefined || (typeof value === "string" && /^[a-z_][a-z0-9_]{0,62}$/.test(value) && value !== "information_schema" && !value.startsWith("pg_")),
  create: (value) => value === undefined || typeof value === "boolean",
  poolSize: (value) => value === undefined || (Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= 100),
  migrate: (value) => value === undefined || typeof value === "boolean",
  maxValueBytes: (value) => value === undefined || (Number.isSafeInteger(value) && (value as number) > 0 && (value as number) <= 1024 ** 3),
};

describeWithPostgres("createPostgresStore given hostile options", () => {
  it("throws invalid_input at once for a wrong value in any field, an unknown or prototype key, and creates no schema", async () => {
    const schema = fresh();
    fc.assert(
      fc.property(withHostileField({ connectionString: testPostgresUrl, schema, create: true, poolSize: 2, migrate: true, maxValueBytes: 1024 }), (options) => {
        const valid = Object.keys(options).every((key) => Object.hasOwn(acceptable, key) && acceptable[key]!(options[key]));
        if (valid) {
          // Still valid (an optional field left out, or another allowed value): it constructs; nothing is sent until first use.
          void open(options as unknown as PostgresStoreOptions);
          return;
        }
        expectThrowsKeel(() => open(options as unknown as PostgresStoreOptions));
      }),
      { numRuns: 300 },
    );
    for (const store of stores.splice(0)) await store.close();
    expect(await schemaExists(schema)).toBe(false);
  });

  it("refuses a system schema (information_schema, pg_catalog, pg_toast, any pg_*) and creates nothing in it", async () => {
    const before = await adminQuery("SELECT table_schema, table_name FROM information_schema.tables WHERE table_name LIKE 'keel%' ORDER BY 1, 2");
    for (const schema of ["information_schema", "pg_catalog", "pg_toast", "pg_temp_1", "pg_keel", "pg_"]) {
      expect(expectThrowsKeel(() => open({ connectionString: testPostgresUrl, schema })).message).toMatch(/system schema/);
    }
    expect(await adminQuery("SELECT table_schema, table_name FROM information_schema.tables WHERE table_name LIKE 'keel%' ORDER BY 1, 2")).toEqual(before);
    expect(await adminQuery("SELECT 1 FROM information_schema.schemata WHERE schema_name = 'pg_keel'")).toEqual([]);
  });

  it("refuses a connection string with NUL, a huge one, and text pg would read as a relative URL (host 'base')", () => {
    for (const connectionString of [`${testPostgresUrl}\0`, "postgres://a\0b@127.0.0.1/test", "x".repeat(9000), "../x", "keel", "host=db dbname=keel", "mysql://db/x"]) {
      expectThrowsKeel(() => open({ connectionString }));
    }
    expect(() => open({ connectionString: "socket:/var/run/postgresql?db=test" })).not.toThrow();
    expect(() => open({ connectionString: "/var/run/postgresql test" })).not.toThrow();
  });
});

describeWithPostgres("createPostgresStore with create: false (what reading tools open)", () => {
  it("answers not_found for a missing schema at first use, and creates none", async () => {
    const schema = fresh();
    const store = open({ connectionString: testPostgresUrl, schema, create: false, migrate: false });
    expect((await errOf(store.docs.list([]))).code).toBe("not_found");
    expect((await errOf(store.check())).code).toBe("not_found");
    const migrating = open({ connectionString: testPostgresUrl, schema, create: false });
    expect((await errOf(migrating.docs.get(["d"]))).code).toBe("not_found");
    expect(await schemaExists(schema)).toBe(false);
  });

  it("answers not_found for a schema without a Keel store, and creates no table in it", async () => {
    const schema = fresh();
    await adminQuery(`CREATE SCHEMA "${schema}"`);
    const store = open({ connectionString: testPostgresUrl, schema, create: false });
    const error = await errOf(store.docs.list([]));
    expect(error.code).toBe("not_found");
    expect(error.details).toMatchObject({ schemaExists: true });
    expect(await adminQuery("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [schema])).toEqual([]);
  });

  it("opens a store that is there, and sees it once another process has created it", async () => {
    const schema = fresh();
    const reader = open({ connectionString: testPostgresUrl, schema, create: false, migrate: false });
    expect((await errOf(reader.docs.get(["d"]))).code).toBe("not_found");
    await okValue(open({ connectionString: testPostgresUrl, schema }).docs.put(["d"], 1, { create: true }));
    expect((await okValue(reader.docs.get(["d"])))?.value).toBe(1);
  });
});

describeWithPostgres("the PostgreSQL store's ports given hostile arguments", () => {
  it("answers every method as the memory store does, typed, and a refusal writes nothing", async () => {
    const store = open({ connectionString: testPostgresUrl, schema: fresh(), poolSize: 2 });
    await checkPortsAgainstReference(store, createMemoryStore(), 250);
  });

  it("refuses a list cursor with NUL (or longer than a key) as invalid_input before any query reaches the server", async () => {
    const { pool, sent } = countingPool();
    const store = open({ pool, schema: fresh() });
    await okValue(store.docs.put(["a"], 1, { create: true }));
    const before = sent();
    for (const after of ["a\0", "\0", "missions/m1\0/x", "x".repeat(5000)]) {
      expect((await errOf(store.docs.list([], { after }))).code).toBe("invalid_input");
      expect((await errOf(store.docs.readPage!([], { after }))).code).toBe("invalid_input");
    }
    // And every other string that reaches SQL: keys, log names, record ids, holders, lease names.
    expect((await errOf(store.docs.get(["a\0"]))).code).toBe("invalid_input");
    expect((await errOf(store.docs.put(["a\0b"], 1, { create: true }))).code).toBe("invalid_input");
    expect((await errOf(store.logs.append(["l\0"], [{ id: "r", value: 1 }]))).code).toBe("invalid_input");
    expect((await errOf(store.logs.append(["l"], [{ id: "r\0", value: 1 }]))).code).toBe("invalid_input");
    expect((await errOf(store.logs.read(["l\0"]))).code).toBe("invalid_input");
    expect((await errOf(store.leases.acquire("l\0", "h", { ttlMs: 1000 }))).code).toBe("invalid_input");
    expect((await errOf(store.leases.acquire("l", "h\0", { ttlMs: 1000 }))).code).toBe("invalid_input");
    expect((await errOf(store.leases.current("l\0"))).code).toBe("invalid_input");
    expect(sent()).toBe(before);
  });

  it("answers a fence naming a lease with NUL as lease_lost, as every store does, not io_failed", async () => {
    const store = open({ connectionString: testPostgresUrl, schema: fresh() });
    for (const lease of ["l\0", "\0", "a/../b"]) {
      expect((await errOf(store.docs.put(["d"], 1, { create: true, fence: { lease, token: 1 } }))).code).toBe("lease_lost");
      expect((await errOf(store.logs.append(["l"], [{ id: "r", value: 1 }], { fence: { lease, token: 1 } }))).code).toBe("lease_lost");
      expect((await errOf(store.docs.batch!([{ key: ["d"], value: 1, condition: { create: true } }], { fence: { lease, token: 1 } }))).code).toBe("lease_lost");
    }
    expect(await okValue(store.docs.get(["d"]))).toBeUndefined();
    expect(await okValue(store.logs.head(["l"]))).toBeUndefined();
  });

  it("stores a NUL inside a JSON value as data (escaped in its JSON text) and refuses a huge value with too_large", async () => {
    const store = open({ connectionString: testPostgresUrl, schema: fresh(), maxValueBytes: 1024 });
    await okValue(store.docs.put(["v"], { text: "a\0b" }, { create: true }));
    expect((await okValue(store.docs.get(["v"])))?.value).toEqual({ text: "a\0b" });
    expect((await errOf(store.docs.put(["big"], "x".repeat(2000), { create: true }))).code).toBe("too_large");
    expect(await okValue(store.docs.get(["big"]))).toBeUndefined();
  });
});
