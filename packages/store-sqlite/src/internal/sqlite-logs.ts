import type { JsonValue, KeelError } from "@keel/core";
import type { LogRecord, LogStore } from "@keel/store";
import { decideAppend, keyPath, validateAppend, validateFenceOption, validateKey, validateReadOptions } from "@keel/store/kit";
import { err, errAsync, ok, type Result } from "neverthrow";
import { parseStored } from "./sqlite-docs.js";
import { checkFenceIn } from "./sqlite-leases.js";
import { decodeKeyText as decodeKey, encodeKeyText as encodeKey, keyTextPrefixRange as prefixRange } from "@keel/store/kit";
import { readStep, writeTransaction, type SqliteContext } from "./sqlite-context.js";

/** The log port over `keel_logs` (head rows) and `keel_log_records`. */
export function createSqliteLogs(context: SqliteContext): LogStore {
  const { db } = context;
  const head = db.prepare<[string], { last_seq: number; deleted: number }>("SELECT last_seq, deleted FROM keel_logs WHERE key = ?");
  const textOf = db.prepare<[string, string], { value: string }>("SELECT value FROM keel_log_records WHERE log = ? AND id = ?");
  const insert = db.prepare("INSERT INTO keel_log_records (log, seq, id, value, at) VALUES (?, ?, ?, ?, ?)");
  const setHead = db.prepare(
    "INSERT INTO keel_logs (key, last_seq, deleted) VALUES (?, ?, 0) ON CONFLICT (key) DO UPDATE SET last_seq = excluded.last_seq, deleted = 0",
  );
  const read = db.prepare<[string, number, number], { seq: number; id: string; value: string; at: string }>(
    "SELECT seq, id, value, at FROM keel_log_records WHERE log = ? AND seq > ? ORDER BY seq LIMIT ?",
  );
  // Without a limit, a statement without LIMIT: a bound LIMIT costs SQLite about as much again
  // as the lookup itself (a read of pending writes, often empty, is on a checkpointer's hot path).
  const readAll = db.prepare<[string, number], { seq: number; id: string; value: string; at: string }>(
    "SELECT seq, id, value, at FROM keel_log_records WHERE log = ? AND seq > ? ORDER BY seq",
  );
  const dropRecords = db.prepare("DELETE FROM keel_log_records WHERE log = ?");
  const markDeleted = db.prepare("UPDATE keel_logs SET deleted = 1 WHERE key = ?");
  const list = db.prepare<[string, string], { key: string }>("SELECT key FROM keel_logs WHERE deleted = 0 AND key >= ? AND key < ? ORDER BY key");

  return {
    append: (log, records, options) => {
      const checked = validateKey(log, "log").andThen((segments) => validateAppend(records, options, context.maxValueBytes).map((parsed) => ({ segments, ...parsed })));
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, records: encoded, options: parsed } = checked.value;
      const stored = encodeKey(segments);
      const path = keyPath(segments);
      return writeTransaction(context, `appending to ${path}`, () =>
        checkFenceIn(context, parsed.fence).andThen(() => {
          const current = head.get(stored);
          const state = {
            lastSeq: current?.last_seq ?? 0,
            deleted: current?.deleted === 1,
            textOf: (id: string) => textOf.get(stored, id)?.value,
          };
          return decideAppend(state, encoded, parsed.expectedSeq, path).map(({ fresh, deduplicated }) => {
            let lastSeq = state.lastSeq;
            const at = new Date(context.clock.now()).toISOString();
            for (const record of fresh) insert.run(stored, ++lastSeq, record.id, record.text, at);
            if (fresh.length > 0 || !current || state.deleted) setHead.run(stored, lastSeq);
            return { lastSeq, appended: fresh.length, deduplicated };
          });
        }),
      );
    },
    read: (log, options) => {
      const checked = validateKey(log, "log").andThen((segments) => validateReadOptions(options).map((parsed) => ({ segments, parsed })));
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, parsed } = checked.value;
      const stored = encodeKey(segments);
      const limited = Number.isFinite(parsed.limit);
      return readStep(context, `reading ${keyPath(segments)}`, (): Result<LogRecord[], KeelError> => {
        const out: LogRecord[] = [];
        for (const row of limited ? read.all(stored, parsed.afterSeq, parsed.limit) : readAll.all(stored, parsed.afterSeq)) {
          const value = parseStored(context, row.value, `logs/${keyPath(segments)}@${row.seq}`);
          if (value.isErr()) return err(value.error);
          out.push({ seq: row.seq, id: row.id, value: value.value as JsonValue, at: row.at });
        }
        return ok(out);
      });
    },
    head: (log) => {
      const segments = validateKey(log, "log");
      if (segments.isErr()) return errAsync(segments.error);
      return readStep(context, "reading a log head", () => {
        const row = head.get(encodeKey(segments.value));
        return ok(row && row.deleted === 0 ? { lastSeq: row.last_seq } : undefined);
      });
    },
    delete: (log, options) => {
      const checked = validateKey(log, "log").andThen((segments) => validateFenceOption(options).map((parsed) => ({ segments, parsed })));
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, parsed } = checked.value;
      const stored = encodeKey(segments);
      return writeTransaction(context, `deleting ${keyPath(segments)}`, () =>
        checkFenceIn(context, parsed.fence).map(() => {
          const current = head.get(stored);
          if (!current || current.deleted === 1) return false;
          dropRecords.run(stored);
          markDeleted.run(stored);
          return true;
        }),
      );
    },
    list: (prefix) => {
      const segments = validateKey(prefix, "prefix", true);
      if (segments.isErr()) return errAsync(segments.error);
      const { from, to } = prefixRange(segments.value);
      return readStep(context, "listing logs", () => ok(list.all(from, to).map((row) => decodeKey(row.key))));
    },
  };
}
