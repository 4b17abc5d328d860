/**
 * The PostgreSQL server the tests run against: `KEEL_TEST_POSTGRES_URL`, else the local
 * `postgres://postgres@127.0.0.1:5432/test`. Each test makes its own schema and drops it.
 * Without a reachable server the tests say so and are skipped — except under `CI=true`, where
 * {@link describeWithPostgres} registers a failing test instead (CI has a server: a skip there
 * would hide a broken setup).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, it } from "vitest";

/** The server used when `KEEL_TEST_POSTGRES_URL` is not set. */
export const LOCAL_TEST_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test";

/** The connection string of the test server. */
export const testPostgresUrl = process.env.KEEL_TEST_POSTGRES_URL ?? LOCAL_TEST_POSTGRES_URL;

/** Why the test server cannot be used, or undefined when it answers. */
export async function probeTestPostgres(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: testPostgresUrl, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return `${testPostgresUrl}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const unreachable = await probeTestPostgres();

/**
 * `describe` when the test server answers. Otherwise: under `CI=true` a failing test; elsewhere
 * a warning and a skipped block whose title says what to set.
 */
export function describeWithPostgres(title: string, body: () => void): void {
  if (!unreachable) {
    describe(title, body);
    return;
  }
  if (process.env.CI === "true") {
    describe(title, () => {
      it("needs PostgreSQL: CI must provide one (set KEEL_TEST_POSTGRES_URL)", () => {
        throw new Error(`PostgreSQL tests cannot run under CI=true: ${unreachable}`);
      });
    });
    return;
  }
  console.warn(`[keel] skipping "${title}": no PostgreSQL (${unreachable}); set KEEL_TEST_POSTGRES_URL to run it`);
  describe.skip(`${title} (skipped: no PostgreSQL; set KEEL_TEST_POSTGRES_URL)`, body);
}

/** A fresh schema name for one test (`keel_test_<pid>_<random>`). */
export function freshSchemaName(): string {
  return `keel_test_${process.pid}_${randomBytes(5).toString("hex")}`;
}

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: testPostgresUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Runs one statement on a connection of its own (for tests that tamper with or inspect the database). */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: testPostgresUrl });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
