import type { IntegrityReport } from "@keel/store";
import { createIntegrityFindings } from "@keel/store/kit";
import type { KeelError } from "@keel/core";
import { ok, type Result } from "neverthrow";
import { sqlitePlace } from "./sqlite-docs.js";
import { readSchemaVersion, SQLITE_SCHEMA_VERSION } from "./sqlite-schema.js";
import type { SqliteContext } from "./sqlite-context.js";

/**
 * The integrity check: SQLite's own `quick_check` of pages and indexes, the schema version,
 * every live value parsing as JSON, and every log's seqs dense up to its head. Nothing here is
 * safely repairable in place (a damaged page needs a backup), so `repair` only reports.
 */
export function checkSqlite(context: SqliteContext): Result<IntegrityReport, KeelError> {
  const { db, file } = context;
  const findings = createIntegrityFindings(sqlitePlace(context));
  for (const row of db.prepare("PRAGMA quick_check").all() as { quick_check: string }[]) {
    if (row.quick_check !== "ok") findings.add({ location: file, code: "corrupt", message: row.quick_check });
  }
  findings.schema(readSchemaVersion(db), SQLITE_SCHEMA_VERSION);
  for (const row of db.prepare("SELECT key, value FROM keel_docs WHERE deleted = 0").iterate() as Iterable<{ key: string; value: string | null }>) {
    findings.doc(row.key, row.value);
  }
  for (const row of db.prepare("SELECT log, seq, value FROM keel_log_records").iterate() as Iterable<{ log: string; seq: number; value: string }>) {
    findings.record(row.log, row.seq, row.value);
  }
  const logs = db
    .prepare(
      `SELECT l.key AS key, l.last_seq AS lastSeq, count(r.seq) AS count, min(r.seq) AS low, max(r.seq) AS high
       FROM keel_logs l LEFT JOIN keel_log_records r ON r.log = l.key WHERE l.deleted = 0 GROUP BY l.key`,
    )
    .all() as { key: string; lastSeq: number; count: number; low: number | null; high: number | null }[];
  for (const seqs of logs) findings.logSeqs(seqs);
  return ok(findings.report());
}
