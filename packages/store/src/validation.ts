import { KeelError, canonicalJson, findNonJson, isPlainObjectOf, isSafeName, parseSafeName, utf8Bytes, validate, type JsonValue } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import type { AppendOptions, DeleteCondition, Fence, Key, LogRecordInput, PutCondition } from "./ports.js";

/** The most segments a key may have. */
export const MAX_KEY_DEPTH = 16;

/** The default largest value (JSON text bytes) a store accepts: 1 MiB. */
export const DEFAULT_MAX_VALUE_BYTES = 1024 * 1024;

/**
 * The longest duration (ms) any store option accepts: a lease's time to live, a wait, a lock's
 * stale time. 2^31 - 1 ms (about 24.8 days), the longest `setTimeout` delay, so that no timer
 * derived from a duration overflows (Node fires an overflowed timer after 1 ms) and no
 * `now + duration` leaves the range of a `Date`.
 */
export const MAX_DURATION_MS = 2_147_483_647;

/** The most writes one `DocStore.batch` accepts. */
export const MAX_BATCH_WRITES = 100;

/** The longest record id a log accepts. */
export const MAX_RECORD_ID_LENGTH = 256;

/**
 * Validates a key: an array of 1 to {@link MAX_KEY_DEPTH} safe-name segments
 * (or 0 segments when `allowEmpty`, for list prefixes). Returns a fresh `string[]`.
 */
export function validateKey(key: unknown, what = "key", allowEmpty = false): Result<string[], KeelError> {
  if (!Array.isArray(key)) {
    return err(new KeelError("invalid_input", `${what} must be an array of name segments, got ${typeof key}`, { details: { what } }));
  }
  if (key.length === 0 && !allowEmpty) {
    return err(new KeelError("invalid_input", `${what} must have at least one segment`, { details: { what } }));
  }
  if (key.length > MAX_KEY_DEPTH) {
    return err(
      new KeelError("invalid_input", `${what} has ${key.length} segments; at most ${MAX_KEY_DEPTH} are allowed`, { details: { what } }),
    );
  }
  for (const segment of key) {
    if (!isSafeName(segment)) {
      const named = parseSafeName(segment, `${what} segment`);
      if (named.isErr()) return err(named.error);
    }
  }
  return ok([...(key as string[])]);
}

/** Validates a lease name (a safe name). */
export function validateLeaseName(name: unknown): Result<string, KeelError> {
  return parseSafeName(name, "lease name");
}

/**
 * Serializes a value for storage: checks it is plain JSON and at most `maxBytes` of JSON text.
 * The text keeps the caller's key order (`JSON.stringify`, not canonical JSON), so what a host
 * stores reads back byte for byte: a rebuilt prompt is the prompt a provider's cache has seen.
 * Equality of stored values is decided by {@link sameJsonText}, which ignores key order.
 * `too_large` and `invalid_input` are reported before anything is written.
 */
export function encodeValue(value: unknown, maxBytes: number, what = "value"): Result<{ text: string; bytes: number }, KeelError> {
  let problem: string | undefined;
  let text = "";
  try {
    problem = findNonJson(value);
    if (problem === undefined) text = JSON.stringify(value);
  } catch (error) {
    // A getter that throws (a host's proxy): not plain JSON.
    problem = `reading it threw: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (problem !== undefined) {
    return err(new KeelError("invalid_input", `${what} is not plain JSON: ${problem}`, { details: { problem } }));
  }
  const bytes = utf8Bytes(text);
  if (bytes > maxBytes) {
    return err(
      new KeelError("too_large", `${what} is ${bytes} bytes of JSON; the store accepts at most ${maxBytes}`, {
        details: { bytes, maxBytes },
      }),
    );
  }
  return ok({ text, bytes });
}

/**
 * Whether two stored JSON texts hold equal values: the same text, or the same value with keys in
 * another order (values keep their writer's key order, see {@link encodeValue}). The texts are
 * parsed only when they differ, so the common case (a retry of the same write) costs one compare.
 */
export function sameJsonText(a: string, b: string): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return canonicalJson(JSON.parse(a)) === canonicalJson(JSON.parse(b));
}

/** zod schema of a write's fence. */
const FenceSchema = z.strictObject({ lease: z.string().min(1), token: z.number().int().nonnegative() });
const fenceField = { fence: FenceSchema.optional() };

/** zod schema of a put condition. */
const PutConditionSchema = z.union([
  z.strictObject({ expectedVersion: z.number().int().nonnegative(), ...fenceField }),
  z.strictObject({ create: z.literal(true), ...fenceField }),
  z.strictObject({ unconditional: z.literal(true), ...fenceField }),
]);

/** zod schema of a delete condition. */
const DeleteConditionSchema = z.union([
  z.strictObject({ expectedVersion: z.number().int().nonnegative(), ...fenceField }),
  z.strictObject({ unconditional: z.literal(true), ...fenceField }),
]);

/**
 * Validates a put condition: exactly one of `{ expectedVersion }`, `{ create: true }`,
 * `{ unconditional: true }`, with an optional fence. A missing condition is `invalid_input`:
 * blind writes must say so.
 */
export function validatePutCondition(condition: unknown): Result<PutCondition & { fence?: Fence }, KeelError> {
  const what = "put condition (use { expectedVersion }, { create: true } or { unconditional: true })";
  return validate(PutConditionSchema, condition, what) as Result<PutCondition & { fence?: Fence }, KeelError>;
}

/** Validates a delete condition (`{ expectedVersion }` or `{ unconditional: true }`, optional fence). */
export function validateDeleteCondition(condition: unknown): Result<DeleteCondition & { fence?: Fence }, KeelError> {
  const what = "delete condition (use { expectedVersion } or { unconditional: true })";
  return validate(DeleteConditionSchema, condition, what) as Result<DeleteCondition & { fence?: Fence }, KeelError>;
}

/** zod schema of a record id or lease holder. */
const RecordIdSchema = z
  .string()
  .min(1)
  .max(MAX_RECORD_ID_LENGTH)
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters");

const AppendOptionsSchema = z
  .strictObject({ expectedSeq: z.number().int().nonnegative().optional(), durable: z.boolean().optional(), ...fenceField })
  .optional();

/** A record ready to append: its id, its value and its JSON text (the caller's key order). */
export interface EncodedRecord {
  id: string;
  value: JsonValue;
  text: string;
}

/**
 * Validates an append: the records (an array of `{ id, value }`, values plain JSON within
 * `maxBytes`) and the options. Duplicate ids inside one batch must carry equal values
 * (`conflict` otherwise) and are folded into one.
 */
export function validateAppend(
  records: unknown,
  options: unknown,
  maxBytes: number,
): Result<{ records: EncodedRecord[]; options: AppendOptions }, KeelError> {
  const parsedOptions = validate(AppendOptionsSchema, options, "append options");
  if (parsedOptions.isErr()) return err(parsedOptions.error);
  if (!Array.isArray(records)) {
    return err(new KeelError("invalid_input", "records must be an array of { id, value }", { details: {} }));
  }
  const byId = new Map<string, EncodedRecord>();
  const out: EncodedRecord[] = [];
  for (let index = 0; index < records.length; index++) {
    const record = records[index] as Partial<LogRecordInput> | null;
    if (typeof record !== "object" || record === null || Array.isArray(record)) {
      return err(new KeelError("invalid_input", `records[${index}] must be an object { id, value }`, { details: { index } }));
    }
    const extra = Object.keys(record).filter((name) => name !== "id" && name !== "value");
    if (extra.length > 0) {
      return err(new KeelError("invalid_input", `records[${index}] has unknown fields: ${extra.join(", ")}`, { details: { index } }));
    }
    const id = validate(RecordIdSchema, record.id, `records[${index}].id`);
    if (id.isErr()) return err(id.error);
    if (!("value" in record)) {
      return err(new KeelError("invalid_input", `records[${index}] has no value`, { details: { index } }));
    }
    const encoded = encodeValue(record.value, maxBytes, `records[${index}].value`);
    if (encoded.isErr()) return err(encoded.error);
    const previous = byId.get(id.value);
    if (previous) {
      if (!sameJsonText(previous.text, encoded.value.text)) {
        return err(
          new KeelError("conflict", `record id "${id.value}" appears twice in one append with different values`, {
            details: { id: id.value },
          }),
        );
      }
      continue;
    }
    const entry = { id: id.value, value: JSON.parse(encoded.value.text) as JsonValue, text: encoded.value.text };
    byId.set(id.value, entry);
    out.push(entry);
  }
  return ok({ records: out, options: (parsedOptions.value ?? {}) as AppendOptions });
}

const ReadOptionsSchema = z
  .strictObject({
    afterSeq: z.number().int().nonnegative().optional(),
    limit: z.number().int().positive().optional(),
  })
  .optional();

/** Validates log read options. */
export function validateReadOptions(options: unknown): Result<{ afterSeq: number; limit: number }, KeelError> {
  const parsed = validate(ReadOptionsSchema, options, "read options");
  if (parsed.isErr()) return err(parsed.error);
  return ok({ afterSeq: parsed.value?.afterSeq ?? 0, limit: parsed.value?.limit ?? Number.POSITIVE_INFINITY });
}

const PageSchema = z
  .strictObject({
    // A cursor is a `keyCursor` (at most 16 safe names of 128 characters, joined by '/'), so it
    // never holds a control character nor runs longer; one that does is refused here, in every
    // store, before it reaches a database (PostgreSQL text cannot hold NUL).
    after: z
      .string()
      .max(MAX_KEY_DEPTH * 129 - 1, "a cursor is at most the length of a key: pass the next of the previous page")
      // eslint-disable-next-line no-control-regex
      .regex(/^[^\u0000-\u001f\u007f]*$/, "a cursor must not contain NUL or other control characters: pass the next of the previous page").optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .optional();

const CheckOptionsSchema = z.strictObject({ repair: z.boolean().optional() }).optional();

/** Validates the options of `KeelStore.check` (`{ repair?: boolean }`, or none). */
export function validateCheckOptions(options: unknown): Result<{ repair: boolean }, KeelError> {
  const parsed = validate(CheckOptionsSchema, options, "check options");
  if (parsed.isErr()) return err(parsed.error);
  return ok({ repair: parsed.value?.repair === true });
}

/** Validates a list page request; `limit` defaults to 100. */
export function validatePage(page: unknown): Result<{ after: string | undefined; limit: number }, KeelError> {
  const parsed = validate(PageSchema, page, "page");
  if (parsed.isErr()) return err(parsed.error);
  return ok({ after: parsed.value?.after, limit: parsed.value?.limit ?? 100 });
}

/** zod schema of lease acquire options. */
const AcquireSchema = z.strictObject({
  ttlMs: z.number().int().positive().max(MAX_DURATION_MS),
  waitMs: z.number().int().nonnegative().max(MAX_DURATION_MS).optional(),
  signal: z.instanceof(AbortSignal, { message: "signal must be an AbortSignal" }).optional(),
});

/** Validates a lease acquisition: name, holder (1 to 256 characters) and options. */
export function validateAcquire(
  name: unknown,
  holder: unknown,
  options: unknown,
): Result<{ name: string; holder: string; ttlMs: number; waitMs: number; signal?: AbortSignal }, KeelError> {
  const leaseName = validateLeaseName(name);
  if (leaseName.isErr()) return err(leaseName.error);
  const parsedHolder = validate(RecordIdSchema, holder, "lease holder");
  if (parsedHolder.isErr()) return err(parsedHolder.error);
  const parsed = validate(AcquireSchema, options, "acquire options");
  if (parsed.isErr()) return err(parsed.error);
  return ok({
    name: leaseName.value,
    holder: parsedHolder.value,
    ttlMs: parsed.value.ttlMs,
    waitMs: parsed.value.waitMs ?? 0,
    ...(parsed.value.signal === undefined ? {} : { signal: parsed.value.signal }),
  });
}

/** zod schema of a lease handed back to renew or release. */
const LeaseSchema = z.strictObject({
  name: z.string(),
  holder: z.string(),
  token: z.number().int().nonnegative(),
  expiresAt: z.number(),
});

/** Validates a lease handed back to `renew` or `release`. */
export function validateLease(lease: unknown): Result<{ name: string; holder: string; token: number; expiresAt: number }, KeelError> {
  const parsed = validate(LeaseSchema, lease, "lease");
  if (parsed.isErr()) return err(parsed.error);
  const name = validateLeaseName(parsed.value.name);
  if (name.isErr()) return err(name.error);
  return ok(parsed.value);
}

const RenewSchema = z.strictObject({ ttlMs: z.number().int().positive().max(MAX_DURATION_MS).optional() }).optional();

/** Validates renew options. */
export function validateRenewOptions(options: unknown): Result<{ ttlMs?: number }, KeelError> {
  const parsed = validate(RenewSchema, options, "renew options");
  if (parsed.isErr()) return err(parsed.error);
  return ok((parsed.value ?? {}) as { ttlMs?: number });
}

/** Validates the optional fence of a log delete. */
export function validateFenceOption(options: unknown): Result<{ fence?: Fence }, KeelError> {
  const parsed = validate(FenceOptionSchema, options, "options");
  if (parsed.isErr()) return err(parsed.error);
  return ok((parsed.value ?? {}) as { fence?: Fence });
}

/** zod schema of a fence-only options object; built once, not per call. */
const FenceOptionSchema = z.strictObject(fenceField).optional();

/** The `lease_lost` error of a write whose fence is no longer current. */
export function leaseLost(fence: Fence, reason: string): KeelError {
  return new KeelError("lease_lost", `the write's lease "${fence.lease}" (token ${fence.token}) ${reason}; nothing was written`, {
    details: { lease: fence.lease, token: fence.token },
  });
}

/** Joins a key into its display and sort form (`a/b/c`). */
export function keyPath(key: readonly string[]): string {
  return key.join("/");
}

/** True when `key` starts with `prefix` and is longer than it. */
export function hasPrefix(key: readonly string[], prefix: readonly string[]): boolean {
  if (key.length <= prefix.length) return false;
  for (let index = 0; index < prefix.length; index++) if (key[index] !== prefix[index]) return false;
  return true;
}

/** Compares keys segment by segment (string order), shorter first on a tie. */
export function compareKeys(left: readonly string[], right: readonly string[]): number {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    const a = left[index]!;
    const b = right[index]!;
    if (a !== b) return a < b ? -1 : 1;
  }
  return left.length - right.length;
}

/** The cursor of a key in a listing (its `keyPath`, segments joined by NUL-free `/`). */
export function keyCursor(key: readonly string[]): string {
  return keyPath(key);
}

/** Compares a key with a cursor produced by {@link keyCursor}. */
export function compareKeyToCursor(key: readonly string[], cursor: string): number {
  return compareKeys(key, cursor.split("/"));
}

/** One validated write of a `DocStore.batch`: its key, condition and encoded value. */
export interface EncodedPut {
  segments: string[];
  /** The key as text (`keyPath`), for messages and maps. */
  path: string;
  condition: PutCondition;
  text: string;
  bytes: number;
}

/**
 * Validates a `DocStore.batch`: at most {@link MAX_BATCH_WRITES} writes, each a key, a JSON
 * value of at most `maxBytes` and a put condition without a fence of its own (the batch's fence
 * is in `options`), no key twice. Errors name the write (`writes[i]`, `details.index`).
 */
export function validateBatch(writes: unknown, options: unknown, maxBytes: number): Result<{ writes: EncodedPut[]; fence?: Fence }, KeelError> {
  if (!Array.isArray(writes)) return err(new KeelError("invalid_input", `writes must be an array of { key, value, condition }, got ${typeof writes}`));
  if (writes.length > MAX_BATCH_WRITES) {
    return err(new KeelError("invalid_input", `a batch has ${writes.length} writes; at most ${MAX_BATCH_WRITES} are allowed`, { details: { count: writes.length } }));
  }
  const fence = validateFenceOption(options);
  if (fence.isErr()) return err(fence.error);
  const out: EncodedPut[] = [];
  const seen = new Set<string>();
  for (const [index, write] of (writes as unknown[]).entries()) {
    const named = (error: KeelError) =>
      err(new KeelError(error.code, `writes[${index}]: ${error.message}`, { details: { ...error.details, index }, cause: error, retryable: error.retryable }));
    if (!isPlainObjectOf(write, ["key", "value", "condition"]) || !Object.hasOwn(write, "value")) {
      return err(new KeelError("invalid_input", `writes[${index}] must be { key, value, condition }`, { details: { index } }));
    }
    const segments = validateKey(write.key);
    if (segments.isErr()) return named(segments.error);
    const condition = validatePutCondition(write.condition);
    if (condition.isErr()) return named(condition.error);
    if (condition.value.fence) return named(new KeelError("invalid_input", "a batch write has no fence of its own: pass { fence } as the batch's option"));
    const encoded = encodeValue(write.value, maxBytes, `writes[${index}].value`);
    if (encoded.isErr()) return named(encoded.error);
    const path = keyPath(segments.value);
    if (seen.has(path)) return named(new KeelError("invalid_input", `key ${path} appears twice in one batch`, { details: { key: path } }));
    seen.add(path);
    out.push({ segments: segments.value, path, condition: condition.value, ...encoded.value });
  }
  return ok({ writes: out, ...(fence.value.fence ? { fence: fence.value.fence } : {}) });
}
