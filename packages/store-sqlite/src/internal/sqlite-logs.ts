import type { KeelError } from "@keel/core";
import type { LogRecord, LogStore } from "@keel/store";
import { decideAppend, storedRecords, validateAppendArguments, validateKey, validateLogDeleteArguments, validateLogKey, validateReadArguments } from "@keel/store/kit";
import { errAsync, ok, type Result } from "neverthrow";
import { sqlitePlace } from "./sqlite-docs.js";
import { checkFenceIn } from "./sqlite-leases.js";
import { decodeKeyText as decodeKey, keyTextPrefixRange as prefixRange } from "@keel/store/kit";
import { readStep, writeTransaction, type SqliteContext } from "./sqlite-context.js";

/** The log port over `keel_logs` (head rows) and `keel_log_records`. */
export function createSqliteLogs(context: SqliteContext): LogStore {
  const { db } = context;
  const place = sqlitePlace(context);
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
      const checked = validateAppendArguments(log, records, options, context.maxValueBytes);
      if (checked.isErr()) return errAsync(checked.error);
      const { stored, path, records: encoded, options: parsed } = checked.value;
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
      const checked = validateReadArguments(log, options);
      if (checked.isErr()) return errAsync(checked.error);
      const { stored, path, parsed } = checked.value;
      const limited = Number.isFinite(parsed.limit);
      return readStep(context, `reading ${path}`, (): Result<LogRecord[], KeelError> =>
        storedRecords(place, path, limited ? read.all(stored, parsed.afterSeq, parsed.limit) : readAll.all(stored, parsed.afterSeq), (row) => row),
      );
    },
    head: (log) => {
      const checked = validateLogKey(log);
      if (checked.isErr()) return errAsync(checked.error);
      return readStep(context, "reading a log head", () => {
        const row = head.get(checked.value.stored);
        return ok(row && row.deleted === 0 ? { lastSeq: row.last_seq } : undefined);
      });
    },
    delete: (log, options) => {
      const checked = validateLogDeleteArguments(log, options);
      if (checked.isErr()) return errAsync(checked.error);
      const { stored, path, parsed } = checked.value;
      return writeTransaction(context, `deleting ${path}`, () =>
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
