import { errOf, okValue } from "@keel/testkit";
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../test-support/postgres-test-database.js";
import { createPostgresStore, type PostgresStore } from "./index.js";

const schemas: string[] = [];
const closers: (() => Promise<void>)[] = [];
const open = (options: { lockTimeoutMs?: number; statementTimeoutMs?: number; idleInTransactionTimeoutMs?: number } = {}) => {
  const schema = freshSchemaName();
  schemas.push(schema);
  const store = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 2, ...options });
  closers.push(() => store.close());
  return store;
};
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** A thrown `KeelError` with `code`, for `toThrow`. */
const keelError = (code: string) => expect.objectContaining({ name: "KeelError", code });

/** Another session that holds the document row `key` of `store` locked (`FOR UPDATE`) until it is released. */
async function lockRow(store: PostgresStore, key: string): Promise<{ release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: testPostgresUrl });
  await client.connect();
  await client.query("BEGIN");
  const locked = await client.query(`SELECT 1 FROM "${store.schema}".keel_docs WHERE key = $1 FOR UPDATE`, [key]);
  expect(locked.rowCount).toBe(1);
  const release = async () => {
    await client.query("ROLLBACK");
    await client.end();
  };
  closers.push(() => release().catch(() => undefined));
  return { release };
}

describeWithPostgres("createPostgresStore timeouts", () => {
  it("refuses timeouts that are not whole milliseconds from 0 to PostgreSQL's limit", () => {
    for (const bad of [-1, 1.5, 2 ** 31, Number.NaN]) {
      expect(() => createPostgresStore({ connectionString: testPostgresUrl, lockTimeoutMs: bad })).toThrow(keelError("invalid_input"));
      expect(() => createPostgresStore({ connectionString: testPostgresUrl, statementTimeoutMs: bad })).toThrow(keelError("invalid_input"));
      expect(() => createPostgresStore({ connectionString: testPostgresUrl, idleInTransactionTimeoutMs: bad })).toThrow(keelError("invalid_input"));
    }
    expect(() => createPostgresStore({ connectionString: testPostgresUrl, lockTimeoutMs: "5s" as never })).toThrow(keelError("invalid_input"));
  });

  it("sets the timeouts in every transaction with SET LOCAL (defaults 20 s, 30 s, 10 s, or the options), leaving the session as it was", async () => {
    const schema = freshSchemaName();
    schemas.push(schema);
    // One connection, so every transaction and the check afterwards share one session.
    const pool = new pg.Pool({ connectionString: testPostgresUrl, max: 1 });
    closers.push(() => pool.end());
    const atCommit: string[] = [];
    const settings = "SELECT current_setting('lock_timeout') || ' ' || current_setting('statement_timeout') || ' ' || current_setting('idle_in_transaction_session_timeout') AS s";
    pool.on("acquire", (client) => {
      const marked = client as unknown as { keelWrapped?: boolean; query: (...args: unknown[]) => Promise<unknown> };
      if (marked.keelWrapped) return;
      marked.keelWrapped = true;
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      marked.query = async (...args: unknown[]) => {
        if (args[0] === "COMMIT") atCommit.push(((await query(settings)) as { rows: { s: string }[] }).rows[0]!.s);
        return query(...args);
      };
    });
    const defaults = createPostgresStore({ pool, schema });
    closers.push(() => defaults.close());
    const chosen = createPostgresStore({ pool, schema, lockTimeoutMs: 250, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 1_500 });
    closers.push(() => chosen.close());
    // The migrations run under the store's settings too.
    await okValue(defaults.migrate());
    await okValue(chosen.migrate());
    await okValue(defaults.docs.put(["a"], 1, { create: true }));
    await okValue(chosen.docs.update!(["b"], () => ({ value: 1 })));
    expect(atCommit).toEqual(["20s 30s 10s", "250ms 0 1500ms", "20s 30s 10s", "250ms 0 1500ms"]);
    // Outside the store's transactions, on the same session: the server's settings, untouched.
    expect((await pool.query<{ s: string }>(settings)).rows[0]!.s).toBe("0 0 0");
  });

  it("fails a write that waits on a row locked elsewhere longer than lockTimeoutMs: unavailable, retryable, nothing written", async () => {
    const store = open({ lockTimeoutMs: 300 });
    await okValue(store.docs.put(["hot"], { n: 0 }, { create: true }));
    const holder = await lockRow(store, "hot");
    for (const write of [
      () => store.docs.put(["hot"], { n: 1 }, { unconditional: true }).map(() => undefined),
      () => store.docs.update!(["hot"], () => ({ value: { n: 2 } })).map(() => undefined),
      () => store.docs.batch!([{ key: ["hot"], value: { n: 3 }, condition: { unconditional: true } }]).map(() => undefined),
      () => store.docs.delete(["hot"], { unconditional: true }).map(() => undefined),
    ]) {
      const started = performance.now();
      const failed = await errOf(write());
      const waited = performance.now() - started;
      expect(failed.code).toBe("unavailable");
      expect(failed.retryable).toBe(true);
      expect(failed.details).toMatchObject({ sqlState: "55P03" });
      expect(waited).toBeGreaterThanOrEqual(250);
      // Far below the 30 s statement timeout and the forever of PostgreSQL's default: the lock timeout ended it.
      expect(waited).toBeLessThan(5_000);
    }
    // Other rows are not held up meanwhile.
    await okValue(store.docs.put(["cold"], 1, { create: true }));
    await holder.release();
    expect(await okValue(store.docs.get(["hot"]))).toMatchObject({ value: { n: 0 }, version: 1 });
    await okValue(store.docs.put(["hot"], { n: 4 }, { expectedVersion: 1 }));
  });

  it("fails a statement that runs longer than statementTimeoutMs as unavailable (retryable)", async () => {
    const store = open({ statementTimeoutMs: 200, lockTimeoutMs: 0 });
    await okValue(store.docs.put(["hot"], { n: 0 }, { create: true }));
    // With no lock timeout, the wait on a locked row is what outlasts the statement timeout.
    const holder = await lockRow(store, "hot");
    const failed = await errOf(store.docs.put(["hot"], { n: 1 }, { unconditional: true }));
    expect(failed.code).toBe("unavailable");
    expect(failed.retryable).toBe(true);
    expect(failed.details).toMatchObject({ sqlState: "57014" });
    await holder.release();
    expect(await okValue(store.docs.get(["hot"]))).toMatchObject({ value: { n: 0 }, version: 1 });
  });
});
