/**
 * What the crash worker writes, computable by the test from a name alone: the test checks every
 * byte it reads back against these, so a torn or mixed-up document or record cannot pass.
 */

/** The documents the worker rewrites, under `["crash", name]`. */
export const CRASH_DOCS = ["doc-0", "doc-1", "doc-2"] as const;
/** The logs the worker appends to, under `["crash", name]`. */
export const CRASH_LOGS = ["log-0", "log-1"] as const;
/** The lease the worker takes and releases. */
export const CRASH_LEASE = "crash.lease";
/** A log is deleted (and starts again) once it holds more than this many records. */
export const CRASH_LOG_LIMIT = 60;

/** FNV-1a, 32 bits. */
export function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193) >>> 0;
  }
  return value;
}

/** The value of document `name` at write number `n`: from a few bytes to ~24 KB (several pages). */
export function docValue(name: string, n: number): { name: string; n: number; pad: string } {
  return { name, n, pad: "d".repeat(hash(`${name}:${n}`) % 24_000) };
}

/**
 * The value of log record `id`: mostly small, one in six 64–320 KB, so that many batches are
 * writes of tens of pages or more, which a kill can tear.
 */
export function recordValue(id: string): { id: string; pad: string } {
  const h = hash(id);
  return { id, pad: "r".repeat(h % 6 === 0 ? 64_000 + (h % 256_000) : h % 300) };
}
