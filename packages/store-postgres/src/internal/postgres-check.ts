import type { KeelError } from "@keel/core";
import type { IntegrityProblem, IntegrityReport } from "@keel/store";
import { keyPath } from "@keel/store/kit";
import { ok, type Result } from "neverthrow";
import type { Pool } from "pg";
import type { PostgresContext } from "./postgres-context.js";
import { decodeKeyText as decodeKey } from "@keel/store/kit";
import { POSTGRES_SCHEMA_VERSION, readPostgresSchemaVersion } from "./postgres-schema.js";

const parses = (text: string | null) => {
  try {
    JSON.parse(text ?? "");
    return true;
  } catch {
    return false;
  }
};

/**
 * The integrity check: the schema version, every live value parsing as JSON, and every log's
 * seqs dense up to its head. PostgreSQL guards its own pages; nothing here is repairable in
 * place, so `repair` only reports.
 */
export async function checkPostgres(pool: Pool, context: PostgresContext): Promise<Result<IntegrityReport, KeelError>> {
  const { tables } = context;
  const where = `postgres:${tables.schema}`;
  const problems: IntegrityProblem[] = [];
  const version = await readPostgresSchemaVersion(pool, tables.schema);
  if (version !== POSTGRES_SCHEMA_VERSION) problems.push({ location: where, code: "schema", message: `schema version ${version}; this adapter writes ${POSTGRES_SCHEMA_VERSION}` });
  for (const row of (await pool.query<{ key: string; value: string | null }>(`SELECT key, value FROM ${tables.docs} WHERE NOT deleted ORDER BY key`)).rows) {
    if (!parses(row.value)) problems.push({ location: `${where}#docs/${keyPath(decodeKey(row.key))}`, code: "corrupt", message: "the stored value is not JSON" });
  }
  for (const row of (await pool.query<{ log: string; seq: string; value: string }>(`SELECT log, seq, value FROM ${tables.records} ORDER BY log, seq`)).rows) {
    if (!parses(row.value)) problems.push({ location: `${where}#logs/${keyPath(decodeKey(row.log))}@${row.seq}`, code: "corrupt", message: "the stored record is not JSON" });
  }
  const gaps = await pool.query<{ key: string; last_seq: string; count: string; low: string | null; high: string | null }>(
    `SELECT l.key, l.last_seq, count(r.seq) AS count, min(r.seq) AS low, max(r.seq) AS high
     FROM ${tables.logs} l LEFT JOIN ${tables.records} r ON r.log = l.key WHERE NOT l.deleted GROUP BY l.key, l.last_seq ORDER BY l.key`,
  );
  for (const row of gaps.rows) {
    const count = Number(row.count);
    if (count > 0 && (Number(row.high) !== Number(row.last_seq) || Number(row.high) - Number(row.low) + 1 !== count)) {
      problems.push({ location: `${where}#logs/${keyPath(decodeKey(row.key))}`, code: "seq_gap", message: `${count} records between seq ${row.low} and ${row.high}, head ${row.last_seq}` });
    }
  }
  return ok({ ok: problems.length === 0, repaired: [], problems });
}
