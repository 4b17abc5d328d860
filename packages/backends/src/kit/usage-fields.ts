import { addUsage, emptyUsage, KeelError, type Usage } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { asRecord, type Loose } from "./loose-json.js";

/**
 * Reads the numeric fields of one CLI's raw usage object, for the adapter's usage dialect
 * (`<cli>-usage.ts`): absent or `null` is unknown (`null`), anything else must be valid.
 */
export interface UsageFieldReader {
  /** A token count: a non-negative safe integer, or `null` when absent. */
  count(source: Loose, key: string): Result<number | null, KeelError>;
  /** A cost in US dollars: a non-negative finite number, or `null` when absent. */
  cost(source: Loose, key: string): Result<number | null, KeelError>;
}

/** A {@link UsageFieldReader} whose errors (`invalid_input`) name `backend` and the field. */
export function createUsageFieldReader(backend: string): UsageFieldReader {
  const invalid = (key: string, value: unknown, expected: string) =>
    new KeelError("invalid_input", `${backend} usage field "${key}" is ${JSON.stringify(value) ?? String(value)}: expected ${expected}`, {
      details: { backend, field: key },
    });
  return {
    count(source, key) {
      const value = source[key];
      if (value === undefined || value === null) return ok(null);
      if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return ok(value);
      return err(invalid(key, value, "a non-negative integer token count"));
    },
    cost(source, key) {
      const value = source[key];
      if (value === undefined || value === null) return ok(null);
      if (typeof value === "number" && Number.isFinite(value) && value >= 0) return ok(value);
      return err(invalid(key, value, "a non-negative number of US dollars"));
    },
  };
}

/** Reads several fields at once; the first invalid one wins. */
export function readUsageFields<K extends string>(reads: Record<K, Result<number | null, KeelError>>): Result<Record<K, number | null>, KeelError> {
  const out = {} as Record<K, number | null>;
  for (const key of Object.keys(reads) as K[]) {
    const result = reads[key];
    if (result.isErr()) return err(result.error);
    out[key] = result.value;
  }
  return ok(out);
}

/** `whole - part` when `part` is known and fits inside `whole`; otherwise `whole` (the part was not included). */
export function withoutPart(whole: number | null, part: number | null): number | null {
  if (whole === null || part === null || part > whole) return whole;
  return whole - part;
}

/** The object at `source[key]`, or `undefined`. */
export function childRecord(source: Loose, key: string): Loose | undefined {
  return asRecord(source[key]);
}

/**
 * Wraps a dialect: `null`/`undefined` is "nothing reported" (every bucket `null`), a non-object
 * is `invalid_input`, and an array is a list of steps summed bucket by bucket.
 */
export function readUsageReport(
  backend: string,
  raw: unknown,
  read: (raw: Loose, fields: UsageFieldReader) => Result<Usage, KeelError>,
): Result<Usage, KeelError> {
  if (raw === undefined || raw === null) return ok(emptyUsage());
  if (Array.isArray(raw)) {
    let sum = emptyUsage();
    for (const step of raw) {
      const normalized = readUsageReport(backend, step, read);
      if (normalized.isErr()) return normalized;
      sum = addUsage(sum, normalized.value);
    }
    return ok(sum);
  }
  const record = asRecord(raw);
  if (!record) {
    return err(new KeelError("invalid_input", `${backend} usage must be an object or an array of objects, got ${typeof raw}`, { details: { backend } }));
  }
  return read(record, createUsageFieldReader(backend));
}

function difference(now: number | null, before: number | null): number | null {
  if (now === null) return null;
  if (before === null) return null;
  return now >= before ? now - before : null;
}

/**
 * This turn's usage from a thread's running totals (Codex reports a resumed thread's total as
 * the turn's usage): bucket by bucket `total - previousTotal`. A bucket is `null` when either
 * total does not know it, or when the total shrank (the thread is not the one the previous total
 * was taken from): an unknown figure, never a negative or an over-count.
 */
export function subtractUsage(total: Usage, previousTotal: Usage): Usage {
  return {
    inputUncached: difference(total.inputUncached, previousTotal.inputUncached),
    cacheRead: difference(total.cacheRead, previousTotal.cacheRead),
    cacheWrite: difference(total.cacheWrite, previousTotal.cacheWrite),
    output: difference(total.output, previousTotal.output),
    reasoning: difference(total.reasoning, previousTotal.reasoning),
    costUsd: total.costUsd === null || previousTotal.costUsd === null ? null : Math.max(0, total.costUsd - previousTotal.costUsd),
  };
}
