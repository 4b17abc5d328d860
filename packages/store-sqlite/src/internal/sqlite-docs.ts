import { KeelError, type JsonValue } from "@keel/core";
import type { DamagedEntry, Doc, DocMeta, DocStore, PutCondition, WrittenDoc } from "@keel/store";
import {
  decideBatch,
  decideDelete,
  decidePut,
  encodeValue,
  keyCursor,
  keyPath,
  validateBatch,
  validateDeleteCondition,
  validateKey,
  validatePage,
  validatePutCondition,
} from "@keel/store/kit";
import { err, errAsync, ok, type Result } from "neverthrow";
import { checkFenceIn } from "./sqlite-leases.js";
import { decodeKeyText as decodeKey, encodeCursorText as encodeCursor, encodeKeyText as encodeKey, keyTextPrefixRange as prefixRange } from "@keel/store/kit";
import { readStep, writeTransaction, type SqliteContext } from "./sqlite-context.js";

interface DocRow {
  version: number;
  deleted: number;
  value: string | null;
  updated_at: string;
}

/** Parses a stored value; a damaged one is `corrupt` with its location, never `undefined`. */
export function parseStored(context: SqliteContext, text: string | null, location: string): Result<JsonValue, KeelError> {
  try {
    if (text === null) throw new Error("no value");
    return ok(JSON.parse(text) as JsonValue);
  } catch (error) {
    return err(new KeelError("corrupt", `the stored value of ${location} in ${context.file} is not JSON`, { details: { location: `${context.file}#${location}` }, cause: error }));
  }
}

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
  const iso = () => new Date(context.clock.now()).toISOString();
  const state = (row: Pick<DocRow, "version" | "deleted"> | undefined) => (row ? { version: row.version, deleted: row.deleted === 1 } : undefined);

  return {
    get: (key) => {
      const segments = validateKey(key);
      if (segments.isErr()) return errAsync(segments.error);
      return readStep(context, "reading a document", () => {
        const row = select.get(encodeKey(segments.value));
        if (!row || row.deleted === 1) return ok(undefined);
        return parseStored(context, row.value, `docs/${keyPath(segments.value)}`).map((value) => ({ key: segments.value, value, version: row.version, updatedAt: row.updated_at }));
      });
    },
    put: (key, value, condition) => {
      const checked = validateKey(key).andThen((segments) =>
        validatePutCondition(condition).andThen((parsed) => encodeValue(value, context.maxValueBytes).map((encoded) => ({ segments, parsed, encoded }))),
      );
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, parsed, encoded } = checked.value;
      const stored = encodeKey(segments);
      const path = keyPath(segments);
      const what = `writing ${path}`;
      const written = (version: number, updatedAt: string) => ({ key: [...segments], value: JSON.parse(encoded.text) as JsonValue, version, updatedAt });
      // Serialized and checked before the transaction: nothing slow runs while the write lock is
      // held. The write checks its own condition; a refused one is decided by decidePut, as in
      // every store (see batch).
      const fast = writeTransaction(context, what, () =>
        checkFenceIn(context, parsed.fence).andThen(() => {
          const updatedAt = iso();
          const version = writeIf(stored, parsed, encoded.text, encoded.bytes, updatedAt);
          return version === undefined ? err(refused) : ok(written(version, updatedAt));
        }),
      );
      const decided = () =>
        writeTransaction(context, what, () =>
          checkFenceIn(context, parsed.fence).andThen(() =>
            decidePut(state(stateOf.get(stored)), parsed, path).map((version) => {
              const updatedAt = iso();
              upsert.run(stored, version, encoded.text, encoded.bytes, updatedAt);
              return written(version, updatedAt);
            }),
          ),
        );
      return fast.orElse((error) => (error === refused ? decided() : errAsync(error)));
    },
    delete: (key, condition) => {
      const checked = validateKey(key).andThen((segments) => validateDeleteCondition(condition).map((parsed) => ({ segments, parsed })));
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, parsed } = checked.value;
      const stored = encodeKey(segments);
      const path = keyPath(segments);
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
      const checked = validateBatch(writes, options, context.maxValueBytes);
      if (checked.isErr()) return errAsync(checked.error);
      const { writes: encoded, fence } = checked.value;
      const stored = encoded.map((write) => encodeKey(write.segments));
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
      const checked = validateKey(prefix, "prefix", true).andThen((segments) => validatePage(page).map((parsed) => ({ segments, parsed })));
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, parsed } = checked.value;
      const { from, to } = prefixRange(segments);
      return readStep(context, "reading a page of documents", () => {
        const rows = readPage.all(from, to, encodeCursor(parsed.after), parsed.limit + 1);
        const items: Doc[] = [];
        const damaged: DamagedEntry[] = [];
        for (const row of rows.slice(0, parsed.limit)) {
          const key = decodeKey(row.key);
          const location = `docs/${keyPath(key)}`;
          const value = parseStored(context, row.value, location);
          if (value.isOk()) items.push({ key, value: value.value, version: row.version, updatedAt: row.updated_at });
          else damaged.push({ key, location: `${context.file}#${location}`, problem: value.error.message });
        }
        const last = rows.length > parsed.limit ? rows[parsed.limit - 1] : undefined;
        return ok({ items, ...(damaged.length > 0 ? { damaged } : {}), ...(last ? { next: keyCursor(decodeKey(last.key)) } : {}) });
      });
    },
    list: (prefix, page) => {
      const checked = validateKey(prefix, "prefix", true).andThen((segments) => validatePage(page).map((parsed) => ({ segments, parsed })));
      if (checked.isErr()) return errAsync(checked.error);
      const { segments, parsed } = checked.value;
      const { from, to } = prefixRange(segments);
      return readStep(context, "listing documents", () => {
        const rows = list.all(from, to, encodeCursor(parsed.after), parsed.limit + 1);
        const items: DocMeta[] = rows.slice(0, parsed.limit).map((row) => ({ key: decodeKey(row.key), version: row.version, updatedAt: row.updated_at, bytes: row.bytes }));
        const last = items[items.length - 1];
        return ok(rows.length > parsed.limit && last ? { items, next: keyCursor(last.key) } : { items });
      });
    },
  };
}
