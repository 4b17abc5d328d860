import { errOf, okValue } from "@keel/testkit";
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import { adminQuery, describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../test-support/postgres-test-database.js";
import { createPostgresStore, POSTGRES_SCHEMA_VERSION, type PostgresStore } from "./index.js";

const schemas: string[] = [];
const stores: PostgresStore[] = [];
const open = (options: { schema?: string; migrate?: boolean; poolSize?: number } = {}) => {
  const schema = options.schema ?? freshSchemaName();
  if (!schemas.includes(schema)) schemas.push(schema);
  const store = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: options.poolSize ?? 2, ...(options.migrate === undefined ? {} : { migrate: options.migrate }) });
  stores.push(store);
  return store;
};
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** A thrown `KeelError` with `code`, for `toThrow`. */
const keelError = (code: string) => expect.objectContaining({ name: "KeelError", code });

describeWithPostgres("createPostgresStore", () => {
  it("migrates once when many stores open one empty schema at the same time", async () => {
    const schema = freshSchemaName();
    const many = Array.from({ length: 6 }, () => open({ schema, poolSize: 1 }));
    const outcomes = await Promise.all(many.map((store) => okValue(store.migrate())));
    expect(outcomes.filter((outcome) => outcome.from === 0)).toHaveLength(1);
    expect(outcomes.every((outcome) => outcome.to === POSTGRES_SCHEMA_VERSION)).toBe(true);
    expect(await adminQuery(`SELECT version FROM "${schema}".keel_schema`)).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
    await okValue(many[0]!.docs.put(["d"], 1, { create: true }));
    expect((await okValue(many[5]!.docs.get(["d"])))?.version).toBe(1);
  });

  it("re-runs a half-applied migration idempotently", async () => {
    const schema = freshSchemaName();
    schemas.push(schema);
    // A crash after some tables were created, before the version was recorded.
    await adminQuery(`CREATE SCHEMA "${schema}"`);
    await adminQuery(`CREATE TABLE "${schema}".keel_leases (name text COLLATE "C" PRIMARY KEY, holder text NOT NULL, token bigint NOT NULL, expires_at bigint NOT NULL)`);
    const store = open({ schema });
    expect(await okValue(store.migrate())).toEqual({ from: 0, to: POSTGRES_SCHEMA_VERSION });
    expect((await okValue(store.leases.acquire("l", "h", { ttlMs: 1_000 }))).token).toBe(1);
  });

  it("refuses a newer schema with unsupported and leaves it untouched", async () => {
    const schema = freshSchemaName();
    await okValue(open({ schema }).migrate());
    await adminQuery(`UPDATE "${schema}".keel_schema SET version = $1`, [POSTGRES_SCHEMA_VERSION + 1]);
    const newer = open({ schema });
    expect((await errOf(newer.docs.get(["d"]))).code).toBe("unsupported");
    expect((await errOf(newer.migrate())).code).toBe("unsupported");
    expect((await errOf(open({ schema, migrate: false }).docs.get(["d"]))).code).toBe("unsupported");
    expect(await adminQuery(`SELECT version FROM "${schema}".keel_schema`)).toEqual([{ version: POSTGRES_SCHEMA_VERSION + 1 }]);
  });

  it("with migrate: false refuses an unmigrated schema and creates nothing", async () => {
    const schema = freshSchemaName();
    expect((await errOf(open({ schema, migrate: false }).docs.put(["d"], 1, { create: true }))).code).toBe("unsupported");
    expect(await adminQuery("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).toEqual([]);
  });

  it("uses a pool of the host's and leaves it open at close", async () => {
    const pool = new pg.Pool({ connectionString: testPostgresUrl, max: 2 });
    const schema = freshSchemaName();
    schemas.push(schema);
    const store = createPostgresStore({ pool, schema });
    await okValue(store.docs.put(["d"], { via: "pool" }, { create: true }));
    await store.close();
    expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  it("refuses bad options at construction", () => {
    expect(() => createPostgresStore({})).toThrow(keelError("invalid_input"));
    expect(() => createPostgresStore({ connectionString: testPostgresUrl, schema: "Bad-Name" })).toThrow(keelError("invalid_input"));
    expect(() => createPostgresStore({ connectionString: testPostgresUrl, pool: {} as never })).toThrow(keelError("invalid_input"));
  });

  it("stores values as JSON text in the writer's key order: key order and \\u0000 survive", async () => {
    const store = open();
    await okValue(store.docs.put(["d"], { b: 1, a: "nul\u0000here", c: [{ z: 1, y: 2 }] }, { create: true }));
    const schema = store.schema;
    expect(await adminQuery(`SELECT value FROM "${schema}".keel_docs`)).toEqual([{ value: '{"b":1,"a":"nul\\u0000here","c":[{"z":1,"y":2}]}' }]);
    expect(JSON.stringify((await okValue(store.docs.get(["d"])))?.value)).toBe('{"b":1,"a":"nul\\u0000here","c":[{"z":1,"y":2}]}');
  });

  it("leaves no partial write when the connection dies mid-transaction, and reports unavailable (retryable)", async () => {
    const store = open();
    await okValue(store.logs.append(["runs", "r1"], [{ id: "a", value: 1 }]));
    const schema = store.schema;
    // Another transaction holds seq 2 uncommitted, so the store's append, past its head lock and
    // id check, waits inside its INSERT: the middle of its transaction. Kill that backend there.
    const blocker = new pg.Client({ connectionString: testPostgresUrl });
    await blocker.connect();
    await blocker.query("BEGIN");
    await blocker.query(`INSERT INTO "${schema}".keel_log_records (log, seq, id, value, at) VALUES ($1, 2, 'blocker', '0', 0)`, ["runs\u001fr1"]);
    const pending = store.logs.append(["runs", "r1"], [{ id: "b", value: 2 }, { id: "c", value: 3 }]);
    let victim: number | undefined;
    for (let tries = 0; tries < 200 && victim === undefined; tries++) {
      const waiting = await adminQuery<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO %keel_log_records%' AND pid <> $1",
        [(blocker as unknown as { processID: number }).processID],
      );
      victim = waiting[0]?.pid;
      if (victim === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(victim).toBeDefined();
    await adminQuery("SELECT pg_terminate_backend($1)", [victim]);
    const failed = await errOf(pending);
    expect(failed.code).toBe("unavailable");
    expect(failed.retryable).toBe(true);
    await blocker.query("ROLLBACK");
    await blocker.end();
    expect(await okValue(store.logs.head(["runs", "r1"]))).toEqual({ lastSeq: 1 });
    expect((await okValue(store.logs.read(["runs", "r1"]))).map((record) => record.id)).toEqual(["a"]);
    // The retry (same ids) succeeds on a fresh connection, seqs dense.
    expect(await okValue(store.logs.append(["runs", "r1"], [{ id: "b", value: 2 }, { id: "c", value: 3 }]))).toEqual({ lastSeq: 3, appended: 2, deduplicated: 0 });
    expect(await okValue(store.check())).toEqual({ ok: true, repaired: [], problems: [] });
  });

  it("commits a buffered append (durable: false) without waiting for its WAL flush, and only that append", async () => {
    const pool = new pg.Pool({ connectionString: testPostgresUrl, max: 1 });
    // The setting each append transaction commits under, seen from inside it just before COMMIT.
    const seen: string[] = [];
    const wrapped = new WeakSet<object>();
    pool.on("acquire", (client) => {
      if (wrapped.has(client)) return;
      wrapped.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (...args: unknown[]) => {
        if (args[0] === "COMMIT") {
          const shown = (await query("SHOW synchronous_commit")) as { rows: { synchronous_commit: string }[] };
          seen.push(shown.rows[0]!.synchronous_commit);
        }
        return query(...args);
      };
    });
    const schema = freshSchemaName();
    schemas.push(schema);
    const store = createPostgresStore({ pool, schema });
    stores.push(store);
    expect(store.capabilities.bufferedAppends).toBe(true);
    await okValue(store.migrate());
    seen.length = 0;
    await okValue(store.logs.append(["runs", "r1"], [{ id: "a", value: 1 }], { durable: false }));
    await okValue(store.logs.append(["runs", "r1"], [{ id: "b", value: 2 }]));
    await okValue(store.logs.append(["runs", "r1"], [{ id: "c", value: 3 }], { durable: false }));
    await okValue(store.docs.put(["d"], 1, { create: true }));
    expect(seen).toEqual(["off", "on", "off", "on"]);
    expect((await okValue(store.logs.read(["runs", "r1"]))).map((record) => record.id)).toEqual(["a", "b", "c"]);
    await store.close();
    await pool.end();
  });

  it("judges lease expiry by the database clock, not the caller's", async () => {
    const store = open();
    const lease = await okValue(store.leases.acquire("clocked", "h", { ttlMs: 60_000 }));
    const [row] = await adminQuery<{ now: string }>("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now");
    expect(Math.abs(lease.expiresAt - 60_000 - Number(row!.now))).toBeLessThan(5_000);
  });
});
