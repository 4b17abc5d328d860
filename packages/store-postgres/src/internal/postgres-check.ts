import type { KeelError } from "@keel/core";
import type { IntegrityReport } from "@keel/store";
import { createIntegrityFindings } from "@keel/store/kit";
import { ok, type Result } from "neverthrow";
import type { Pool } from "pg";
import type { PostgresContext } from "./postgres-context.js";
import { postgresPlace } from "./postgres-docs.js";
import { POSTGRES_SCHEMA_VERSION, readPostgresSchemaVersion } from "./postgres-schema.js";

/**
 * The integrity check: the schema version, every live value parsing as JSON, and every log's
 * seqs dense up to its head. PostgreSQL guards its own pages; nothing here is repairable in
 * place, so `repair` only reports.
 */
export async function checkPostgres(pool: Pool, context: PostgresContext): Promise<Result<IntegrityReport, KeelError>> {
  const { tables } = context;
  const findings = createIntegrityFindings(postgresPlace(context));
  findings.schema(await readPostgresSchemaVersion(pool, tables.schema), POSTGRES_SCHEMA_VERSION);
  for (const row of (await pool.query<{ key: string; value: string | null }>(`SELECT key, value FROM ${tables.docs} WHERE NOT deleted ORDER BY key`)).rows) {
    findings.doc(row.key, row.value);
  }
  for (const row of (await pool.query<{ log: string; seq: string; value: string }>(`SELECT log, seq, value FROM ${tables.records} ORDER BY log, seq`)).rows) {
    findings.record(row.log, row.seq, row.value);
  }
  const logs = await pool.query<{ key: string; last_seq: string; count: string; low: string | null; high: string | null }>(
    `SELECT l.key, l.last_seq, count(r.seq) AS count, min(r.seq) AS low, max(r.seq) AS high
     FROM ${tables.logs} l LEFT JOIN ${tables.records} r ON r.log = l.key WHERE NOT l.deleted GROUP BY l.key, l.last_seq ORDER BY l.key`,
  );
  const number = (text: string | null) => (text === null ? null : Number(text));
  for (const row of logs.rows) {
    findings.logSeqs({ key: row.key, lastSeq: Number(row.last_seq), count: Number(row.count), low: number(row.low), high: number(row.high) });
  }
  return ok(findings.report());
}
