import { KeelError, canonicalJson, isCount, isPlainObjectOf, isSafeName, parseSafeName, utf8Bytes, validate, validateFast, type JsonValue } from "@keel/core";
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
 * `too_large` and `invalid_input` are reported before anything is written.
 */
export function encodeValue(value: unknown, maxBytes: number, what = "value"): Result<{ text: string; bytes: number }, KeelError> {
  let text: string;
  try {
    // canonicalJson checks the value itself (findNonJson): checked once, not twice.
    text = canonicalJson(value);
  } catch (error) {
    const problem = KeelError.is(error, "invalid_input") ? String(error.details.problem ?? error.message) : String(error);
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

/** zod schema of a write's fence. Internal: exported for the property tests of the fast paths. */
export const FenceSchema = z.strictObject({ lease: z.string().min(1), token: z.number().int().nonnegative() });
const fenceField = { fence: FenceSchema.optional() };

/** zod schema of a put condition (the judge behind {@link validatePutCondition}). Internal: exported for the property tests of the fast paths. */
export const PutConditionSchema = z.union([
  z.strictObject({ expectedVersion: z.number().int().nonnegative(), ...fenceField }),
  z.strictObject({ create: z.literal(true), ...fenceField }),
  z.strictObject({ unconditional: z.literal(true), ...fenceField }),
]);

/** zod schema of a delete condition (the judge behind {@link validateDeleteCondition}). Internal: exported for the property tests of the fast paths. */
export const DeleteConditionSchema = z.union([
  z.strictObject({ expectedVersion: z.number().int().nonnegative(), ...fenceField }),
  z.strictObject({ unconditional: z.literal(true), ...fenceField }),
]);

const FENCE_KEYS = ["lease", "token"];

/** The fast `accept` of {@link FenceSchema} (see `validateFast`): a copy of a plainly valid fence. */
function acceptFence(value: unknown): Fence | undefined {
  if (!isPlainObjectOf(value, FENCE_KEYS)) return undefined;
  const { lease, token } = value;
  return typeof lease === "string" && lease.length > 0 && isCount(token) ? { lease, token } : undefined;
}

const CONDITION_KEYS = ["expectedVersion", "create", "unconditional", "fence"];

/**
 * The fast `accept` of a put or delete condition (see `validateFast`): a copy of a condition
 * with exactly one of its variants (`create` only when `create` is allowed) and no fence or a
 * plainly valid one. Anything else (`undefined`) goes to the schema.
 */
function acceptCondition(value: unknown, create: boolean): (PutCondition & { fence?: Fence }) | undefined {
  if (!isPlainObjectOf(value, CONDITION_KEYS)) return undefined;
  // Exactly one variant's key, judged by presence: a strict schema refuses an extra key even when it holds `undefined`.
  const variants = (Object.hasOwn(value, "expectedVersion") ? 1 : 0) + (Object.hasOwn(value, "create") ? 1 : 0) + (Object.hasOwn(value, "unconditional") ? 1 : 0);
  if (variants !== 1) return undefined;
  const { expectedVersion, create: creating, unconditional } = value;
  let condition: PutCondition;
  if (isCount(expectedVersion)) condition = { expectedVersion };
  else if (create && creating === true) condition = { create: true };
  else if (unconditional === true) condition = { unconditional: true };
  else return undefined;
  if (!Object.hasOwn(value, "fence")) return condition;
  const fence = acceptFence(value.fence);
  return fence ? { ...condition, fence } : undefined;
}

/** The fast `accept` of a put condition (exported for its property test against the schema). */
export const acceptPutCondition = (value: unknown) => acceptCondition(value, true);
/** The fast `accept` of a delete condition (exported for its property test against the schema). */
export const acceptDeleteCondition = (value: unknown) => acceptCondition(value, false) as (DeleteCondition & { fence?: Fence }) | undefined;

/**
 * Validates a put condition: exactly one of `{ expectedVersion }`, `{ create: true }`,
 * `{ unconditional: true }`, with an optional fence. A missing condition is `invalid_input`:
 * blind writes must say so.
 */
export function validatePutCondition(condition: unknown): Result<PutCondition & { fence?: Fence }, KeelError> {
  const what = "put condition (use { expectedVersion }, { create: true } or { unconditional: true })";
  return validateFast(PutConditionSchema, condition, what, acceptPutCondition) as Result<PutCondition & { fence?: Fence }, KeelError>;
}

/** Validates a delete condition (`{ expectedVersion }` or `{ unconditional: true }`, optional fence). */
export function validateDeleteCondition(condition: unknown): Result<DeleteCondition & { fence?: Fence }, KeelError> {
  const what = "delete condition (use { expectedVersion } or { unconditional: true })";
  return validateFast(DeleteConditionSchema, condition, what, acceptDeleteCondition) as Result<DeleteCondition & { fence?: Fence }, KeelError>;
}

/** zod schema of a record id or lease holder. Internal: exported for the property tests of the fast paths. */
export const RecordIdSchema = z
  .string()
  .min(1)
  .max(MAX_RECORD_ID_LENGTH)
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters");

const AppendOptionsSchema = z
  .strictObject({ expectedSeq: z.number().int().nonnegative().optional(), durable: z.boolean().optional(), ...fenceField })
  .optional();

/** A record ready to append: its id, its value and its canonical JSON text. */
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
      if (previous.text !== encoded.value.text) {
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
  .strictObject({ after: z.string().optional(), limit: z.number().int().min(1).max(1000).optional() })
  .optional();

/** Validates a list page request; `limit` defaults to 100. */
export function validatePage(page: unknown): Result<{ after: string | undefined; limit: number }, KeelError> {
  const parsed = validate(PageSchema, page, "page");
  if (parsed.isErr()) return err(parsed.error);
  return ok({ after: parsed.value?.after, limit: parsed.value?.limit ?? 100 });
}

/** zod schema of lease acquire options. Internal: exported for the property tests of the fast paths. */
export const AcquireSchema = z.strictObject({
  ttlMs: z.number().int().positive().max(MAX_DURATION_MS),
  waitMs: z.number().int().nonnegative().max(MAX_DURATION_MS).optional(),
});

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** The fast `accept` of {@link RecordIdSchema} (exported for its property test against the schema). */
export function acceptRecordId(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_RECORD_ID_LENGTH && !CONTROL_CHARACTER.test(value) ? value : undefined;
}

const ACQUIRE_KEYS = ["ttlMs", "waitMs"];

/** The fast `accept` of acquire options (exported for its property test against the schema). */
export function acceptAcquireOptions(value: unknown): { ttlMs: number; waitMs?: number } | undefined {
  if (!isPlainObjectOf(value, ACQUIRE_KEYS)) return undefined;
  const { ttlMs, waitMs } = value;
  if (!isCount(ttlMs) || ttlMs === 0 || ttlMs > MAX_DURATION_MS) return undefined;
  if (!Object.hasOwn(value, "waitMs")) return { ttlMs };
  return isCount(waitMs) && waitMs <= MAX_DURATION_MS ? { ttlMs, waitMs } : undefined;
}

/** Validates a lease acquisition: name, holder (1 to 256 characters) and options. */
export function validateAcquire(
  name: unknown,
  holder: unknown,
  options: unknown,
): Result<{ name: string; holder: string; ttlMs: number; waitMs: number }, KeelError> {
  const leaseName = validateLeaseName(name);
  if (leaseName.isErr()) return err(leaseName.error);
  const parsedHolder = validateFast(RecordIdSchema, holder, "lease holder", acceptRecordId);
  if (parsedHolder.isErr()) return err(parsedHolder.error);
  const parsed = validateFast(AcquireSchema, options, "acquire options", acceptAcquireOptions);
  if (parsed.isErr()) return err(parsed.error);
  return ok({ name: leaseName.value, holder: parsedHolder.value, ttlMs: parsed.value.ttlMs, waitMs: parsed.value.waitMs ?? 0 });
}

/** zod schema of a lease handed back to renew or release. Internal: exported for the property tests of the fast paths. */
export const LeaseSchema = z.strictObject({
  name: z.string(),
  holder: z.string(),
  token: z.number().int().nonnegative(),
  expiresAt: z.number(),
});

const LEASE_KEYS = ["name", "holder", "token", "expiresAt"];

/** The fast `accept` of {@link LeaseSchema} (exported for its property test against the schema). */
export function acceptLease(value: unknown): { name: string; holder: string; token: number; expiresAt: number } | undefined {
  if (!isPlainObjectOf(value, LEASE_KEYS)) return undefined;
  const { name, holder, token, expiresAt } = value;
  if (typeof name !== "string" || typeof holder !== "string" || !isCount(token) || typeof expiresAt !== "number" || !Number.isFinite(expiresAt)) return undefined;
  return { name, holder, token, expiresAt };
}

/** Validates a lease handed back to `renew` or `release`. */
export function validateLease(lease: unknown): Result<{ name: string; holder: string; token: number; expiresAt: number }, KeelError> {
  const parsed = validateFast(LeaseSchema, lease, "lease", acceptLease);
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
  const parsed = validateFast(FenceOptionSchema, options, "options", acceptFenceOption);
  if (parsed.isErr()) return err(parsed.error);
  return ok((parsed.value ?? {}) as { fence?: Fence });
}

/** zod schema of a fence-only options object (the judge behind {@link validateFenceOption}); built once, not per call. */
const FenceOptionSchema = z.strictObject(fenceField).optional();

/** The fast `accept` of {@link FenceOptionSchema}: no options, or `{}` / `{ fence }` with a plainly valid fence. */
function acceptFenceOption(value: unknown): { fence?: Fence } | undefined {
  if (value === undefined) return {};
  if (!isPlainObjectOf(value, ["fence"])) return undefined;
  if (!Object.hasOwn(value, "fence")) return {};
  const fence = acceptFence(value.fence);
  return fence ? { fence } : undefined;
}

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
