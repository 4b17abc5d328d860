import type { IntegrityProblem, IntegrityReport } from "@keel/store";
import { keyPath } from "@keel/store/kit";
import type { KeelError } from "@keel/core";
import { ok, type Result } from "neverthrow";
import { decodeKeyText as decodeKey } from "@keel/store/kit";
import { readSchemaVersion, SQLITE_SCHEMA_VERSION } from "./sqlite-schema.js";
import type { SqliteContext } from "./sqlite-context.js";

const parses = (text: string | null) => {
  try {
    JSON.parse(text ?? "");
    return true;
  } catch {
    return false;
  }
};

/**
 * The integrity check: SQLite's own `quick_check` of pages and indexes, the schema version,
 * every live value parsing as JSON, and every log's seqs dense up to its head. Nothing here is
 * safely repairable in place (a damaged page needs a backup), so `repair` only reports.
 */
export function checkSqlite(context: SqliteContext): Result<IntegrityReport, KeelError> {
  const { db, file } = context;
  const problems: IntegrityProblem[] = [];
  for (const row of db.prepare("PRAGMA quick_check").all() as { quick_check: string }[]) {
    if (row.quick_check !== "ok") problems.push({ location: file, code: "corrupt", message: row.quick_check });
  }
  const version = readSchemaVersion(db);
  if (version !== SQLITE_SCHEMA_VERSION) {
    problems.push({ location: file, code: "schema", message: `schema version ${version}; this adapter writes ${SQLITE_SCHEMA_VERSION}` });
  }
  for (const row of db.prepare("SELECT key, value FROM keel_docs WHERE deleted = 0").iterate() as Iterable<{ key: string; value: string | null }>) {
    if (!parses(row.value)) problems.push({ location: `${file}#docs/${keyPath(decodeKey(row.key))}`, code: "corrupt", message: "the stored value is not JSON" });
  }
  for (const row of db.prepare("SELECT log, seq, value FROM keel_log_records").iterate() as Iterable<{ log: string; seq: number; value: string }>) {
    if (!parses(row.value)) problems.push({ location: `${file}#logs/${keyPath(decodeKey(row.log))}@${row.seq}`, code: "corrupt", message: "the stored record is not JSON" });
  }
  const gaps = db
    .prepare(
      `SELECT l.key AS key, l.last_seq AS last_seq, count(r.seq) AS count, min(r.seq) AS low, max(r.seq) AS high
       FROM keel_logs l LEFT JOIN keel_log_records r ON r.log = l.key WHERE l.deleted = 0 GROUP BY l.key`,
    )
    .all() as { key: string; last_seq: number; count: number; low: number | null; high: number | null }[];
  for (const row of gaps) {
    if (row.count > 0 && (row.high !== row.last_seq || row.high! - row.low! + 1 !== row.count)) {
      problems.push({ location: `${file}#logs/${keyPath(decodeKey(row.key))}`, code: "seq_gap", message: `${row.count} records between seq ${row.low} and ${row.high}, head ${row.last_seq}` });
    }
  }
  return ok({ ok: problems.length === 0, repaired: [], problems });
}
