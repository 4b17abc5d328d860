import { KeelError, type JsonValue } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { decodeKeyText, encodeCursorText, encodeKeyText, keyTextPrefixRange } from "./key-text.js";
import type { AppendOptions, DamagedEntry, DeleteCondition, Doc, DocDecision, DocMeta, DocPage, DocValuePage, Fence, LogRecord, PutCondition } from "./ports.js";
import { encodeValue, keyCursor, keyPath, type EncodedPut, type EncodedRecord } from "./validation.js";
import { validateAppend, validateBatch, validateDeleteCondition, validateFenceOption, validateKey, validatePage, validatePutCondition, validateReadOptions } from "./validation.js";

/*
 * What the adapters that keep keys as key text in rows (SQLite, PostgreSQL) repeat outside their
 * SQL dialect: each port method's arguments checked in one order and given in the forms a row
 * needs, stored JSON read back the same way, and pages cut from rows. The decisions stay in
 * `rules.ts`; the SQL and its transactions stay in each adapter.
 */

/** Where an adapter keeps its rows, as its errors and reports name it. */
export interface StoredPlace {
  /** The start of every location: the database file's path, or `postgres:<schema>`. */
  readonly location: string;
  /** The place in words, after "in": the file's path, or `schema <name>`. */
  readonly described: string;
}

/** A key checked and put in the forms a row store uses. */
export interface RowKey {
  /** The validated segments. */
  segments: string[];
  /** The key text stored in the key column ({@link encodeKeyText}). */
  stored: string;
  /** The key as a path, for messages and locations ({@link keyPath}). */
  path: string;
}

/** A page request checked and put as the bounds of a key-text range query. */
export interface PageQuery {
  /** The range of the prefix: `key >= from AND key < to`. */
  from: string;
  to: string;
  /** The cursor as key text: `key > after` ("" for the first page). */
  after: string;
  /** The page's size; query one row more to learn whether there is a next page. */
  limit: number;
}

/** The columns of a document row besides its key and value, as the port reports them. */
export type DocStamp = Pick<Doc, "version" | "updatedAt">;

function rowKey(key: unknown, what?: string, allowEmpty?: boolean): Result<RowKey, KeelError> {
  return validateKey(key, what, allowEmpty).map((segments) => ({ segments, stored: encodeKeyText(segments), path: keyPath(segments) }));
}

/** Checks `put`'s arguments in the order every store does: the key, the condition, then the value (within `maxValueBytes`). */
export function validatePutArguments(
  key: unknown,
  value: unknown,
  condition: unknown,
  maxValueBytes: number,
): Result<RowKey & { parsed: PutCondition & { fence?: Fence }; encoded: { text: string; bytes: number } }, KeelError> {
  return rowKey(key).andThen((checked) =>
    validatePutCondition(condition).andThen((parsed) => encodeValue(value, maxValueBytes).map((encoded) => ({ ...checked, parsed, encoded }))),
  );
}

/** Checks `update`'s arguments: the key, that `decide` is a function, then the fence option. */
export function validateUpdateArguments(
  key: unknown,
  decide: unknown,
  options: unknown,
): Result<RowKey & { decide: (current: Doc | undefined) => DocDecision; fence?: Fence }, KeelError> {
  return rowKey(key).andThen((checked) => {
    if (typeof decide !== "function") {
      return err(new KeelError("invalid_input", `decide must be a function (current) => { value } | { none: true }, got ${typeof decide}`, { details: { what: "decide" } }));
    }
    return validateFenceOption(options).map((parsed) => ({ ...checked, decide: decide as (current: Doc | undefined) => DocDecision, ...parsed }));
  });
}

/**
 * Runs the `decide` of a `DocStore.update` on the locked document and checks what it returned:
 * `none` to write nothing, or the value's JSON text (within `maxValueBytes`, as `put` checks
 * it). A `decide` that throws or returns neither `{ value }` nor `{ none: true }` is
 * `invalid_input`: the adapter rolls back and writes nothing.
 */
export function runDocDecision(
  decide: (current: Doc | undefined) => DocDecision,
  current: Doc | undefined,
  maxValueBytes: number,
  path: string,
): Result<{ none: true } | { text: string; bytes: number }, KeelError> {
  let decision: unknown;
  try {
    decision = decide(current);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return err(new KeelError("invalid_input", `the decide of an update of ${path} threw (${message}); nothing was written`, { details: { key: path }, cause: error }));
  }
  if (typeof decision === "object" && decision !== null && !Array.isArray(decision)) {
    if ("value" in decision) return encodeValue((decision as { value: unknown }).value, maxValueBytes);
    if ((decision as { none?: unknown }).none === true) return ok({ none: true });
  }
  return err(
    new KeelError("invalid_input", `the decide of an update of ${path} must return { value } or { none: true }; nothing was written`, { details: { key: path } }),
  );
}

/** Checks `batch`'s arguments (see `validateBatch`) and gives each write's key text, in the writes' order, as `stored`. */
export function validateBatchArguments(writes: unknown, options: unknown, maxValueBytes: number): Result<{ writes: EncodedPut[]; fence?: Fence; stored: string[] }, KeelError> {
  return validateBatch(writes, options, maxValueBytes).map((checked) => ({ ...checked, stored: checked.writes.map((write) => encodeKeyText(write.segments)) }));
}

/** Checks a document `delete`'s arguments: the key, then the condition. */
export function validateDeleteArguments(key: unknown, condition: unknown): Result<RowKey & { parsed: DeleteCondition & { fence?: Fence } }, KeelError> {
  return rowKey(key).andThen((checked) => validateDeleteCondition(condition).map((parsed) => ({ ...checked, parsed })));
}

/** Checks `list`'s and `readPage`'s arguments (a prefix, possibly empty, then the page) and gives the range to query. */
export function validatePageQuery(prefix: unknown, page: unknown): Result<PageQuery, KeelError> {
  return validateKey(prefix, "prefix", true).andThen((segments) =>
    validatePage(page).map((parsed) => ({ ...keyTextPrefixRange(segments), after: encodeCursorText(parsed.after), limit: parsed.limit })),
  );
}

/** Checks `append`'s arguments: the log's key, then the records (each value within `maxValueBytes`) and options. */
export function validateAppendArguments(
  log: unknown,
  records: unknown,
  options: unknown,
  maxValueBytes: number,
): Result<RowKey & { records: EncodedRecord[]; options: AppendOptions }, KeelError> {
  return rowKey(log, "log").andThen((checked) => validateAppend(records, options, maxValueBytes).map((parsed) => ({ ...checked, ...parsed })));
}

/** Checks a log `read`'s arguments: the log's key, then the options. */
export function validateReadArguments(log: unknown, options: unknown): Result<RowKey & { parsed: { afterSeq: number; limit: number } }, KeelError> {
  return rowKey(log, "log").andThen((checked) => validateReadOptions(options).map((parsed) => ({ ...checked, parsed })));
}

/** Checks a log `delete`'s arguments: the log's key, then the fence option. */
export function validateLogDeleteArguments(log: unknown, options: unknown): Result<RowKey & { parsed: { fence?: Fence } }, KeelError> {
  return rowKey(log, "log").andThen((checked) => validateFenceOption(options).map((parsed) => ({ ...checked, parsed })));
}

/** Checks a log's key alone (`head`): a key, not empty. */
export function validateLogKey(log: unknown): Result<RowKey, KeelError> {
  return rowKey(log, "log");
}

/** Parses a stored value; a damaged one is `corrupt` with its location, never `undefined`. */
export function parseStoredValue(place: StoredPlace, text: string | null, location: string): Result<JsonValue, KeelError> {
  try {
    if (text === null) throw new Error("no value");
    return ok(JSON.parse(text) as JsonValue);
  } catch (error) {
    return err(new KeelError("corrupt", `the stored value of ${location} in ${place.described} is not JSON`, { details: { location: `${place.location}#${location}` }, cause: error }));
  }
}

/** The document of a live row: its value parsed (`corrupt` if damaged) and its stamp read by `stamp`. */
export function storedDoc<Row extends { value: string | null }>(place: StoredPlace, key: string[], row: Row, stamp: (row: Row) => DocStamp): Result<Doc, KeelError> {
  return parseStoredValue(place, row.value, `docs/${keyPath(key)}`).map((value) => ({ key, value, ...stamp(row) }));
}

/**
 * One page of `readPage` from up to `limit + 1` rows in key order: the readable documents, the
 * damaged keys beside them, and the cursor of the next page when there is a row more.
 */
export function docValuePage<Row extends { key: string; value: string | null }>(place: StoredPlace, rows: readonly Row[], limit: number, stamp: (row: Row) => DocStamp): DocValuePage {
  const items: Doc[] = [];
  const damaged: DamagedEntry[] = [];
  for (const row of rows.slice(0, limit)) {
    const key = decodeKeyText(row.key);
    const doc = storedDoc(place, key, row, stamp);
    if (doc.isOk()) items.push(doc.value);
    else damaged.push({ key, location: `${place.location}#docs/${keyPath(key)}`, problem: doc.error.message });
  }
  const last = rows.length > limit ? rows[limit - 1] : undefined;
  return { items, ...(damaged.length > 0 ? { damaged } : {}), ...(last ? { next: keyCursor(decodeKeyText(last.key)) } : {}) };
}

/** One page of `list` from up to `limit + 1` rows in key order, each row's metadata read by `meta`. */
export function docMetaPage<Row extends { key: string }>(rows: readonly Row[], limit: number, meta: (row: Row) => Omit<DocMeta, "key">): DocPage {
  const items: DocMeta[] = rows.slice(0, limit).map((row) => ({ key: decodeKeyText(row.key), ...meta(row) }));
  const last = items[items.length - 1];
  return rows.length > limit && last ? { items, next: keyCursor(last.key) } : { items };
}

/**
 * The records of a log read from its rows in seq order, each value parsed; the first damaged one
 * makes the read `corrupt` (a log is read whole, never with a hole).
 */
export function storedRecords<Row extends { id: string; value: string }>(
  place: StoredPlace,
  path: string,
  rows: Iterable<Row>,
  stamp: (row: Row) => Pick<LogRecord, "seq" | "at">,
): Result<LogRecord[], KeelError> {
  const out: LogRecord[] = [];
  for (const row of rows) {
    const { seq, at } = stamp(row);
    const value = parseStoredValue(place, row.value, `logs/${path}@${seq}`);
    if (value.isErr()) return err(value.error);
    out.push({ seq, id: row.id, value: value.value, at });
  }
  return ok(out);
}

