import type { KeelError } from "@keel/core";
import type { LogRecord, LogStore } from "@keel/store";
import { decideAppend, storedRecords, validateAppendArguments, validateKey, validateLogDeleteArguments, validateLogKey, validateReadArguments } from "@keel/store/kit";
import { err, errAsync, ok, type Result } from "neverthrow";
import { NOW_MS, read, type PostgresContext } from "./postgres-context.js";
import { postgresPlace } from "./postgres-docs.js";
import { decodeKeyText as decodeKey, keyTextPrefixRange as prefixRange } from "@keel/store/kit";
import { fencedTransaction } from "./postgres-leases.js";

/** The log port over `keel_logs` (head rows, locked per append) and `keel_log_records`. */
export function createPostgresLogs(context: PostgresContext): LogStore {
  const { logs, records: recordsTable } = context.tables;
  const place = postgresPlace(context);
  return {
    append: (log, records, options) => {
      const checked = validateAppendArguments(log, records, options, context.maxValueBytes);
      if (checked.isErr()) return errAsync(checked.error);
      const { stored, path, records: encoded, options: parsed } = checked.value;
      return fencedTransaction(context, `appending to ${path}`, parsed.fence, async (client) => {
        // A buffered append commits without waiting for its WAL flush (this transaction only):
        // visible at once, lost only if the server stops before the WAL writer flushes it, and
        // flushed by any later synchronous commit (the WAL is one sequence).
        if (parsed.durable === false) await client.query("SET LOCAL synchronous_commit = off");
        // The head row is the log's lock: appends to one log take turns on it. Two first
        // appends to a new log both find none; the second's INSERT of the head (or of seq 1)
        // hits the first's key, and its transaction runs again.
        const head = (await client.query<{ last_seq: string; deleted: boolean }>(`SELECT last_seq, deleted FROM ${logs} WHERE key = $1 FOR UPDATE`, [stored])).rows[0];
        const texts = new Map<string, string>();
        if (head && !head.deleted && encoded.length > 0) {
          const existing = await client.query<{ id: string; value: string }>(`SELECT id, value FROM ${recordsTable} WHERE log = $1 AND id = ANY($2::text[])`, [stored, encoded.map((record) => record.id)]);
          for (const row of existing.rows) texts.set(row.id, row.value);
        }
        const state = { lastSeq: Number(head?.last_seq ?? 0), deleted: head?.deleted ?? false, textOf: (id: string) => texts.get(id) };
        const decision = decideAppend(state, encoded, parsed.expectedSeq, path);
        if (decision.isErr()) return err(decision.error);
        const { fresh, deduplicated } = decision.value;
        const lastSeq = state.lastSeq + fresh.length;
        if (fresh.length > 0) {
          await client.query(
            `INSERT INTO ${recordsTable} (log, seq, id, value, at)
             SELECT $1, $2::bigint + r.ordinality, r.id, r.value, ${NOW_MS} FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS r(id, value, ordinality)`,
            [stored, state.lastSeq, fresh.map((record) => record.id), fresh.map((record) => record.text)],
          );
        }
        if (fresh.length > 0 || !head || state.deleted) {
          await client.query(
            head ? `UPDATE ${logs} SET last_seq = $2, deleted = false WHERE key = $1` : `INSERT INTO ${logs} (key, last_seq, deleted) VALUES ($1, $2, false)`,
            [stored, lastSeq],
          );
        }
        return ok({ lastSeq, appended: fresh.length, deduplicated });
      });
    },
    read: (log, options) => {
      const checked = validateReadArguments(log, options);
      if (checked.isErr()) return errAsync(checked.error);
      const { stored, path, parsed } = checked.value;
      return read(context, `reading ${path}`, async (pool): Promise<Result<LogRecord[], KeelError>> => {
        const rows = await pool.query<{ seq: string; id: string; value: string; at: string }>(
          `SELECT seq, id, value, at FROM ${recordsTable} WHERE log = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
          [stored, parsed.afterSeq, Number.isFinite(parsed.limit) ? parsed.limit : null],
        );
        return storedRecords(place, path, rows.rows, (row) => ({ seq: Number(row.seq), at: new Date(Number(row.at)).toISOString() }));
      });
    },
    head: (log) => {
      const checked = validateLogKey(log);
      if (checked.isErr()) return errAsync(checked.error);
      return read(context, "reading a log head", async (pool) => {
        const row = (await pool.query<{ last_seq: string }>(`SELECT last_seq FROM ${logs} WHERE key = $1 AND NOT deleted`, [checked.value.stored])).rows[0];
        return ok(row ? { lastSeq: Number(row.last_seq) } : undefined);
      });
    },
    delete: (log, options) => {
      const checked = validateLogDeleteArguments(log, options);
      if (checked.isErr()) return errAsync(checked.error);
      const { stored, path, parsed } = checked.value;
      return fencedTransaction(context, `deleting ${path}`, parsed.fence, async (client) => {
        const head = (await client.query<{ deleted: boolean }>(`SELECT deleted FROM ${logs} WHERE key = $1 FOR UPDATE`, [stored])).rows[0];
        if (!head || head.deleted) return ok(false);
        await client.query(`DELETE FROM ${recordsTable} WHERE log = $1`, [stored]);
        await client.query(`UPDATE ${logs} SET deleted = true WHERE key = $1`, [stored]);
        return ok(true);
      });
    },
    list: (prefix) => {
      const segments = validateKey(prefix, "prefix", true);
      if (segments.isErr()) return errAsync(segments.error);
      const { from, to } = prefixRange(segments.value);
      return read(context, "listing logs", async (pool) =>
        ok((await pool.query<{ key: string }>(`SELECT key FROM ${logs} WHERE NOT deleted AND key >= $1 AND key < $2 ORDER BY key`, [from, to])).rows.map((row) => decodeKey(row.key))),
      );
    },
  };
}
