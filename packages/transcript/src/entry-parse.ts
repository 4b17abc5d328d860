import { validate } from "@keel/core";
import type { KeelError } from "@keel/core";
import { ok, type Result } from "neverthrow";
import { acceptEntry } from "./internal/entry-accept.js";
import { ENTRY_SCHEMAS, isKnownEntryType, type TranscriptEntry, UnknownEntrySchema } from "./entry-schema.js";

/**
 * Validates one entry: a known type against its schema, any other type against the tree fields
 * only (an entry of a newer writer is kept as it is). `invalid_input` names `what` and the first
 * problem.
 */
export function parseEntry(value: unknown, what = "transcript entry"): Result<TranscriptEntry, KeelError> {
  let type: unknown;
  try {
    type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  } catch {
    type = undefined;
  }
  const schema = typeof type === "string" && isKnownEntryType(type) ? ENTRY_SCHEMAS[type] : UnknownEntrySchema;
  const parsed = validate(schema, value, typeof type === "string" && isKnownEntryType(type) ? `${what} (${type})` : what) as Result<TranscriptEntry, KeelError>;
  return parsed.map((entry) => {
    try {
      return inKeyOrderOf(value, entry) as TranscriptEntry;
    } catch {
      // A caller's object that cannot be read twice (a hostile getter): the schema's output as it is.
      return entry;
    }
  });
}

/**
 * `parsed` (a schema's output for `given`) with its objects' keys in `given`'s order, keys the
 * schema added last. zod builds its output in the schema's key order; a transcript keeps the
 * caller's, so a message rebuilt from the store is the bytes the model was sent (a provider's
 * prompt cache hits after a restart; issue 31).
 */
function inKeyOrderOf(given: unknown, parsed: unknown): unknown {
  if (Array.isArray(parsed)) return Array.isArray(given) ? parsed.map((item, index) => inKeyOrderOf(given[index], item)) : parsed;
  if (typeof parsed !== "object" || parsed === null || typeof given !== "object" || given === null || Array.isArray(given)) return parsed;
  const source = parsed as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  // defineProperty, not assignment: a "__proto__" key stays an own key of the JSON value.
  const set = (key: string, item: unknown) => Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
  for (const key of Object.keys(given)) if (Object.hasOwn(source, key)) set(key, inKeyOrderOf((given as Record<string, unknown>)[key], source[key]));
  for (const key of Object.keys(source)) if (!Object.hasOwn(out, key)) set(key, source[key]);
  return out;
}

/**
 * {@link parseEntry} with a fast path for plainly well-formed entries (answered as they are, not
 * copied): for entries read from a store or a file, never for a caller's input.
 */
export function readEntry(value: unknown, what = "transcript entry"): Result<TranscriptEntry, KeelError> {
  let accepted: TranscriptEntry | undefined;
  try {
    accepted = acceptEntry(value);
  } catch {
    accepted = undefined;
  }
  return accepted !== undefined ? ok(accepted) : parseEntry(value, what);
}
