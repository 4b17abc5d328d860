import { KeelError, type JsonValue } from "@keel/core";
import type { Doc, DocStore, WrittenDoc } from "@keel/store";
import { decideBatch, decideDelete, decidePut, validateBatchArguments, validateDeleteArguments, validateKey, validatePutArguments, type EncodedPut } from "@keel/store/kit";
import { docMetaPage, docValuePage, encodeKeyText as encodeKey, runDocDecision, storedDoc, validatePageQuery, validateUpdateArguments, type StoredPlace } from "@keel/store/kit";
import { err, errAsync, ok, type ResultAsync } from "neverthrow";
import type { PoolClient } from "pg";
import { NOW_MS, read, transaction, type PostgresContext } from "./postgres-context.js";
import { fencedTransaction } from "./postgres-leases.js";

/** Where the PostgreSQL store's rows are, as its errors and reports name it: `postgres:<schema>`. */
export const postgresPlace = (context: PostgresContext): StoredPlace => ({ location: `postgres:${context.tables.schema}`, described: `schema ${context.tables.schema}` });

const iso = (ms: string | number) => new Date(Number(ms)).toISOString();

const stamp = (row: { version: string; updated_at: string }) => ({ version: Number(row.version), updatedAt: iso(row.updated_at) });

/** The document port over `keel_docs`. */
export function createPostgresDocs(context: PostgresContext): DocStore {
  const { docs } = context.tables;
  const place = postgresPlace(context);
  const lockDoc = async (client: PoolClient, stored: string) => {
    const row = (await client.query<{ version: string; deleted: boolean }>(`SELECT version, deleted FROM ${docs} WHERE key = $1 FOR UPDATE`, [stored])).rows[0];
    return row ? { version: Number(row.version), deleted: row.deleted } : undefined;
  };
  return {
    get: (key) => {
      const segments = validateKey(key);
      if (segments.isErr()) return errAsync(segments.error);
      return read(context, "reading a document", async (pool) => {
        const row = (await pool.query<{ version: string; value: string | null; updated_at: string }>(`SELECT version, value, updated_at FROM ${docs} WHERE key = $1 AND NOT deleted`, [encodeKey(segments.value)])).rows[0];
        return row ? storedDoc(place, segments.value, row, stamp) : ok(undefined);
      });
    },
    put: (key, value, condition) => {
      const checked = validatePutArguments(key, value, condition, context.maxValueBytes);
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, stored, path, parsed, encoded } = checked.value;
      // Serialized and checked before taking a connection (LangGraph's lesson: serializing inside BEGIN starves the pool).
      return fencedTransaction(context, `writing ${path}`, parsed.fence, async (client) => {
        const current = await lockDoc(client, stored);
        const version = decidePut(current, parsed, path);
        if (version.isErr()) return err(version.error);
        // A new key is a plain INSERT: of two creators that both found no row, the second hits
        // the primary key (never an upsert over the first) and its transaction runs again.
        const written = await client.query<{ updated_at: string }>(
          current
            ? `UPDATE ${docs} SET version = $2, deleted = false, value = $3, bytes = $4, updated_at = ${NOW_MS} WHERE key = $1 RETURNING updated_at`
            : `INSERT INTO ${docs} (key, version, deleted, value, bytes, updated_at) VALUES ($1, $2, false, $3, $4, ${NOW_MS}) RETURNING updated_at`,
          [stored, version.value, encoded.text, encoded.bytes],
        );
        return ok({ key: [...segments], value: JSON.parse(encoded.text) as JsonValue, version: version.value, updatedAt: iso(written.rows[0]!.updated_at) });
      });
    },
    update: (key, decide, options) => {
      const checked = validateUpdateArguments(key, decide, options);
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, stored, path, fence } = checked.value;
      // One transaction: lock the row, decide on it, write, commit. Writers of the key queue on the
      // row lock instead of failing a compare-and-swap; only two creators of a new key race (the
      // second hits the primary key and its transaction, decide included, runs again).
      return fencedTransaction(context, `updating ${path}`, fence, async (client) => {
        const row = (
          await client.query<{ version: string; deleted: boolean; value: string | null; updated_at: string }>(
            `SELECT version, deleted, value, updated_at FROM ${docs} WHERE key = $1 FOR UPDATE`,
            [stored],
          )
        ).rows[0];
        let current: Doc | undefined;
        if (row && !row.deleted) {
          const read = storedDoc(place, segments, row, stamp);
          if (read.isErr()) return err(read.error);
          current = read.value;
        }
        const decided = runDocDecision(checked.value.decide, current, context.maxValueBytes, path);
        if (decided.isErr()) return err(decided.error);
        if ("none" in decided.value) return ok(current);
        const { text, bytes } = decided.value;
        const version = (row ? Number(row.version) : 0) + 1;
        const written = await client.query<{ updated_at: string }>(
          row
            ? `UPDATE ${docs} SET version = $2, deleted = false, value = $3, bytes = $4, updated_at = ${NOW_MS} WHERE key = $1 RETURNING updated_at`
            : `INSERT INTO ${docs} (key, version, deleted, value, bytes, updated_at) VALUES ($1, $2, false, $3, $4, ${NOW_MS}) RETURNING updated_at`,
          [stored, version, text, bytes],
        );
        return ok({ key: [...segments], value: JSON.parse(text) as JsonValue, version, updatedAt: iso(written.rows[0]!.updated_at) });
      });
    },
    delete: (key, condition) => {
      const checked = validateDeleteArguments(key, condition);
      if (checked.isErr()) return errAsync(checked.error);
      const { stored, path, parsed } = checked.value;
      return fencedTransaction(context, `deleting ${path}`, parsed.fence, async (client) => {
        const deleted = decideDelete(await lockDoc(client, stored), parsed, path);
        if (deleted.isOk() && deleted.value) {
          await client.query(`UPDATE ${docs} SET version = version + 1, deleted = true, value = NULL, bytes = 0, updated_at = ${NOW_MS} WHERE key = $1`, [stored]);
        }
        return deleted;
      });
    },
    batch: (writes, options) => {
      const checked = validateBatchArguments(writes, options, context.maxValueBytes);
      if (checked.isErr()) return errAsync(checked.error);
      const { writes: encoded, fence, stored } = checked.value;
      if (fence === undefined) return batchInOneStatement(context, encoded, stored);
      // Fenced: one transaction, four round trips whatever the batch's size: lock the existing rows (in
      // key order, so two batches never deadlock), decide, then one statement updates them and
      // inserts the new ones (plain INSERT: a racing creator hits the primary key and the
      // transaction runs again, as a single put does).
      return fencedTransaction(context, `writing ${encoded.length} documents`, fence, async (client) => {
        if (encoded.length === 0) return ok([]);
        const locked = await client.query<{ key: string; version: string; deleted: boolean }>(
          `SELECT key, version, deleted FROM ${docs} WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE`,
          [stored],
        );
        const current = new Map(locked.rows.map((row) => [row.key, { version: Number(row.version), deleted: row.deleted }]));
        const versions = decideBatch(
          stored.map((key) => current.get(key)),
          encoded,
        );
        if (versions.isErr()) return err(versions.error);
        const columns = (pick: (index: number) => boolean) => {
          const chosen = encoded.flatMap((write, index) => (pick(index) ? [index] : []));
          return [chosen.map((index) => stored[index]!), chosen.map((index) => versions.value[index]!), chosen.map((index) => encoded[index]!.text), chosen.map((index) => encoded[index]!.bytes)];
        };
        const existing = columns((index) => current.has(stored[index]!));
        const fresh = columns((index) => !current.has(stored[index]!));
        // Both in one statement (one round trip): the locked rows updated, the new ones inserted.
        const written = await client.query<{ key: string; updated_at: string }>(
          `WITH updated AS (
             UPDATE ${docs} AS d SET version = u.version, deleted = false, value = u.value, bytes = u.bytes, updated_at = ${NOW_MS}
             FROM unnest($1::text[], $2::bigint[], $3::text[], $4::int[]) AS u(key, version, value, bytes) WHERE d.key = u.key RETURNING d.key, d.updated_at
           ), inserted AS (
             INSERT INTO ${docs} (key, version, deleted, value, bytes, updated_at)
             SELECT n.key, n.version, false, n.value, n.bytes, ${NOW_MS} FROM unnest($5::text[], $6::bigint[], $7::text[], $8::int[]) AS n(key, version, value, bytes)
             RETURNING key, updated_at
           )
           SELECT key, updated_at FROM updated UNION ALL SELECT key, updated_at FROM inserted`,
          [...existing, ...fresh],
        );
        const updatedAt = new Map(written.rows.map((row) => [row.key, row.updated_at]));
        return ok(
          encoded.map((write, index): WrittenDoc => ({
            key: [...write.segments],
            version: versions.value[index]!,
            updatedAt: iso(updatedAt.get(stored[index]!)!),
          })),
        );
      });
    },
    readPage: (prefix, page) => {
      const query = validatePageQuery(prefix, page);
      if (query.isErr()) return errAsync(query.error);
      const { from, to, after, limit } = query.value;
      return read(context, "reading a page of documents", async (pool) => {
        const rows = await pool.query<{ key: string; version: string; value: string | null; updated_at: string }>(
          `SELECT key, version, value, updated_at FROM ${docs} WHERE NOT deleted AND key >= $1 AND key < $2 AND key > $3 ORDER BY key LIMIT $4`,
          [from, to, after, limit + 1],
        );
        return ok(docValuePage(place, rows.rows, limit, stamp));
      });
    },
    list: (prefix, page) => {
      const query = validatePageQuery(prefix, page);
      if (query.isErr()) return errAsync(query.error);
      const { from, to, after, limit } = query.value;
      return read(context, "listing documents", async (pool) => {
        const rows = await pool.query<{ key: string; version: string; bytes: number; updated_at: string }>(
          `SELECT key, version, bytes, updated_at FROM ${docs} WHERE NOT deleted AND key >= $1 AND key < $2 AND key > $3 ORDER BY key LIMIT $4`,
          [from, to, after, limit + 1],
        );
        return ok(docMetaPage(rows.rows, limit, (row) => ({ ...stamp(row), bytes: row.bytes })));
      });
    },
  };
}

/**
 * An unfenced batch as one statement (one round trip, atomic by itself): it locks the rows of
 * the batch's keys (`FOR UPDATE`, key order), judges every condition in SQL as `decidePut`
 * does, and writes only when all hold; the rows' states come back either way, and the shared
 * rules (`decideBatch`) give the versions or the error from them, so the SQL decides only
 * whether to write. A racing creator of one of the keys makes the INSERT hit the primary key:
 * the statement runs again with a fresh snapshot. It runs in a transaction of its own (three
 * round trips, not one) so that the store's timeouts bound its wait on a locked row.
 */
function batchInOneStatement(context: PostgresContext, encoded: readonly EncodedPut[], stored: readonly string[]): ResultAsync<WrittenDoc[], KeelError> {
  const { docs } = context.tables;
  const kinds = encoded.map((write) => ("create" in write.condition ? "create" : "unconditional" in write.condition ? "unconditional" : "expected"));
  const expected = encoded.map((write) => ("expectedVersion" in write.condition ? write.condition.expectedVersion : 0));
  const sql = `WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[]) WITH ORDINALITY AS i(key, kind, expected, value, bytes, ord)
    ), current AS (
      SELECT d.key, d.version, d.deleted FROM ${docs} AS d WHERE d.key = ANY($1::text[]) ORDER BY d.key FOR UPDATE
    ), decided AS (
      SELECT i.key, i.value, i.bytes, i.ord, c.version AS current_version, c.deleted AS current_deleted, COALESCE(c.version, 0) + 1 AS next,
        CASE i.kind WHEN 'unconditional' THEN true
          WHEN 'create' THEN c.key IS NULL OR c.deleted
          ELSE c.key IS NOT NULL AND NOT c.deleted AND c.version = i.expected END AS allowed
      FROM input AS i LEFT JOIN current AS c ON c.key = i.key
    ), verdict AS (
      SELECT bool_and(allowed) AS allowed FROM decided
    ), updated AS (
      UPDATE ${docs} AS d SET version = x.next, deleted = false, value = x.value, bytes = x.bytes, updated_at = ${NOW_MS}
      FROM decided AS x WHERE d.key = x.key AND x.current_version IS NOT NULL AND (SELECT allowed FROM verdict)
      RETURNING d.key, d.updated_at
    ), inserted AS (
      INSERT INTO ${docs} (key, version, deleted, value, bytes, updated_at)
      SELECT x.key, x.next, false, x.value, x.bytes, ${NOW_MS} FROM decided AS x WHERE x.current_version IS NULL AND (SELECT allowed FROM verdict)
      RETURNING key, updated_at
    )
    SELECT x.ord, x.current_version, x.current_deleted, COALESCE(u.updated_at, n.updated_at) AS updated_at
    FROM decided AS x LEFT JOIN updated AS u ON u.key = x.key LEFT JOIN inserted AS n ON n.key = x.key ORDER BY x.ord`;
  const parameters = [stored, kinds, expected, encoded.map((write) => write.text), encoded.map((write) => write.bytes)];
  return transaction(context, `writing ${encoded.length} documents`, async (client) => {
    const rows = (await client.query<{ current_version: string | null; current_deleted: boolean | null; updated_at: string | null }>(sql, parameters)).rows;
    const states = rows.map((row) => (row.current_version === null ? undefined : { version: Number(row.current_version), deleted: row.current_deleted === true }));
    const versions = decideBatch(states, encoded);
    if (versions.isErr()) return err(versions.error);
    if (rows.some((row) => row.updated_at === null)) {
      return err(new KeelError("io_failed", `writing ${encoded.length} documents: PostgreSQL did not write a batch the rules allow (schema ${context.tables.schema})`, { details: { schema: context.tables.schema } }));
    }
    return ok(encoded.map((write, index): WrittenDoc => ({ key: [...write.segments], version: versions.value[index]!, updatedAt: iso(rows[index]!.updated_at!) })));
  });
}
