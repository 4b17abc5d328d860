import { KeelError, type JsonValue } from "@keel/core";
import type { DocStore, PutCondition, WrittenDoc } from "@keel/store";
import { decideBatch, decideDelete, decidePut, validateBatchArguments, validateDeleteArguments, validateKey, validatePutArguments } from "@keel/store/kit";
import { docMetaPage, docValuePage, encodeKeyText as encodeKey, storedDoc, validatePageQuery, type StoredPlace } from "@keel/store/kit";
import { err, errAsync, ok, type Result } from "neverthrow";
import { checkFenceIn } from "./sqlite-leases.js";
import { readStep, writeTransaction, type SqliteContext } from "./sqlite-context.js";

interface DocRow {
  version: number;
  deleted: number;
  value: string | null;
  updated_at: string;
}

/** Where the SQLite store's rows are, as its errors and reports name it: the database file. */
export const sqlitePlace = (context: SqliteContext): StoredPlace => ({ location: context.file, described: context.file });

const stamp = (row: { version: number; updated_at: string }) => ({ version: row.version, updatedAt: row.updated_at });

/** The document port over `keel_docs`. */
export function createSqliteDocs(context: SqliteContext): DocStore {
  const { db } = context;
  const select = db.prepare<[string], DocRow>("SELECT version, deleted, value, updated_at FROM keel_docs WHERE key = ?");
  const upsert = db.prepare(
    `INSERT INTO keel_docs (key, version, deleted, value, bytes, updated_at) VALUES (?, ?, 0, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET version = excluded.version, deleted = 0, value = excluded.value, bytes = excluded.bytes, updated_at = excluded.updated_at`,
  );
  const tombstone = db.prepare("UPDATE keel_docs SET version = version + 1, deleted = 1, value = NULL, bytes = 0, updated_at = ? WHERE key = ?");
  const list = db.prepare<[string, string, string, number], { key: string; version: number; bytes: number; updated_at: string }>(
    "SELECT key, version, bytes, updated_at FROM keel_docs WHERE deleted = 0 AND key >= ? AND key < ? AND key > ? ORDER BY key LIMIT ?",
  );
  const readPage = db.prepare<[string, string, string, number], { key: string; version: number; value: string | null; updated_at: string }>(
    "SELECT key, version, value, updated_at FROM keel_docs WHERE deleted = 0 AND key >= ? AND key < ? AND key > ? ORDER BY key LIMIT ?",
  );
  const stateOf = db.prepare<[string], { version: number; deleted: number }>("SELECT version, deleted FROM keel_docs WHERE key = ?");
  // The fast path of a conditional write: the condition checked by the write itself, one
  // statement instead of a read then a write; no row back means the condition did not hold.
  // Kept for speed: it serves SQLite put + get within 1.5× raw better-sqlite3 and the LangGraph
  // checkpointer at ≥ 1× SqliteSaver (bench/store-sql.bench.ts, bench/langgraph.bench.ts; issue 31).
  type Written = { version: number } | undefined;
  /** A fast-path write whose condition did not hold (never returned to a caller). */
  const refused = new KeelError("conflict", "a conditional write was refused");
  const createIfAbsent = db.prepare<[string, string, number, string], { version: number }>(
    `INSERT INTO keel_docs (key, version, deleted, value, bytes, updated_at) VALUES (?, 1, 0, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET version = keel_docs.version + 1, deleted = 0, value = excluded.value, bytes = excluded.bytes, updated_at = excluded.updated_at
     WHERE keel_docs.deleted = 1 RETURNING version`,
  );
  const replaceAt = db.prepare<[string, number, string, string, number], { version: number }>(
    "UPDATE keel_docs SET version = version + 1, value = ?, bytes = ?, updated_at = ? WHERE key = ? AND version = ? AND deleted = 0 RETURNING version",
  );
  const overwrite = db.prepare<[string, string, number, string], { version: number }>(
    `INSERT INTO keel_docs (key, version, deleted, value, bytes, updated_at) VALUES (?, 1, 0, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET version = keel_docs.version + 1, deleted = 0, value = excluded.value, bytes = excluded.bytes, updated_at = excluded.updated_at
     RETURNING version`,
  );
  /** Writes one document if its condition holds (the versions {@link decidePut} gives); undefined, writing nothing, if not. */
  const writeIf = (stored: string, condition: PutCondition, text: string, bytes: number, updatedAt: string): number | undefined => {
    let written: Written;
    if ("expectedVersion" in condition) written = replaceAt.get(text, bytes, updatedAt, stored, condition.expectedVersion);
    else if ("create" in condition) written = createIfAbsent.get(stored, text, bytes, updatedAt);
    else written = overwrite.get(stored, text, bytes, updatedAt);
    return written?.version;
  };
  const place = sqlitePlace(context);
  const iso = () => new Date(context.clock.now()).toISOString();
  const state = (row: Pick<DocRow, "version" | "deleted"> | undefined) => (row ? { version: row.version, deleted: row.deleted === 1 } : undefined);

  return {
    get: (key) => {
      const segments = validateKey(key);
      if (segments.isErr()) return errAsync(segments.error);
      return readStep(context, "reading a document", () => {
        const row = select.get(encodeKey(segments.value));
        return !row || row.deleted === 1 ? ok(undefined) : storedDoc(place, segments.value, row, stamp);
      });
    },
    put: (key, value, condition) => {
      const checked = validatePutArguments(key, value, condition, context.maxValueBytes);
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, stored, path, parsed, encoded } = checked.value;
      const what = `writing ${path}`;
      // The value is returned as given, not parsed back from the stored text: it is the caller's
      // own object, so mutating it changes nothing stored, and as JSON it is what a read returns.
      // Kept for speed: a parse per put counted against SQLite put + get within 1.5× raw
      // better-sqlite3 in CPU (bench/store-sql.bench.ts; issue 31).
      const written = (version: number, updatedAt: string) => ({ key: [...segments], value: value as JsonValue, version, updatedAt });
      // Serialized and checked before the transaction: nothing slow runs while the write lock is
      // held. The write checks its own condition; a refused one wrote nothing, so it is decided
      // in the same transaction by decidePut, as in every store (see batch).
      return writeTransaction(context, what, () =>
        checkFenceIn(context, parsed.fence).andThen(() => {
          const updatedAt = iso();
          const version = writeIf(stored, parsed, encoded.text, encoded.bytes, updatedAt);
          if (version !== undefined) return ok(written(version, updatedAt));
          return decidePut(state(stateOf.get(stored)), parsed, path).map((decided) => {
            upsert.run(stored, decided, encoded.text, encoded.bytes, updatedAt);
            return written(decided, updatedAt);
          });
        }),
      );
    },
    delete: (key, condition) => {
      const checked = validateDeleteArguments(key, condition);
      if (checked.isErr()) return errAsync(checked.error);
      const { stored, path, parsed } = checked.value;
      return writeTransaction(context, `deleting ${path}`, () =>
        checkFenceIn(context, parsed.fence).andThen(() =>
          decideDelete(state(stateOf.get(stored)), parsed, path).map((deleted) => {
            if (deleted) tombstone.run(iso(), stored);
            return deleted;
          }),
        ),
      );
    },
    batch: (writes, options) => {
      const checked = validateBatchArguments(writes, options, context.maxValueBytes);
      if (checked.isErr()) return errAsync(checked.error);
      const { writes: encoded, fence, stored } = checked.value;
      const what = `writing ${encoded.length} documents`;
      // One transaction for the whole batch: one commit (one fsync), all or none. First each
      // write checks its own condition (one statement a write); when one is refused, all are
      // rolled back and the batch runs again reading each state first, so that the refusal is
      // decided (and worded) by decideBatch, as in every store.
      const fast = writeTransaction(context, what, (): Result<WrittenDoc[], KeelError> =>
        checkFenceIn(context, fence).andThen(() => {
          const updatedAt = iso();
          const out: WrittenDoc[] = [];
          for (const [index, write] of encoded.entries()) {
            const version = writeIf(stored[index]!, write.condition, write.text, write.bytes, updatedAt);
            if (version === undefined) return err(refused);
            out.push({ key: [...write.segments], version, updatedAt });
          }
          return ok(out);
        }),
      );
      const decided = () =>
        writeTransaction(context, what, () =>
          checkFenceIn(context, fence).andThen(() =>
            decideBatch(
              stored.map((key) => state(stateOf.get(key))),
              encoded,
            ).map((versions) => {
              const updatedAt = iso();
              return encoded.map((write, index): WrittenDoc => {
                upsert.run(stored[index]!, versions[index]!, write.text, write.bytes, updatedAt);
                return { key: [...write.segments], version: versions[index]!, updatedAt };
              });
            }),
          ),
        );
      return fast.orElse((error) => (error === refused ? decided() : errAsync(error)));
    },
    readPage: (prefix, page) => {
      const query = validatePageQuery(prefix, page);
      if (query.isErr()) return errAsync(query.error);
      const { from, to, after, limit } = query.value;
      return readStep(context, "reading a page of documents", () => ok(docValuePage(place, readPage.all(from, to, after, limit + 1), limit, stamp)));
    },
    list: (prefix, page) => {
      const query = validatePageQuery(prefix, page);
      if (query.isErr()) return errAsync(query.error);
      const { from, to, after, limit } = query.value;
      return readStep(context, "listing documents", () => ok(docMetaPage(list.all(from, to, after, limit + 1), limit, (row) => ({ ...stamp(row), bytes: row.bytes }))));
    },
  };
}
