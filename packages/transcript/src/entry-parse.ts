import { KeelError, validate } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { acceptEntry } from "./internal/entry-accept.js";
import { ENTRY_SCHEMAS, isKnownEntryType, type TranscriptEntry, UnknownEntrySchema } from "./entry-schema.js";

/**
 * Validates one entry: a known type against its schema, any other type against the tree fields
 * only (an entry of a newer writer is kept as it is). `invalid_input` names `what` and the first
 * problem; `what` that is not a string is `invalid_input` too.
 */
export function parseEntry(value: unknown, what = "transcript entry"): Result<TranscriptEntry, KeelError> {
  if (typeof what !== "string") return err(new KeelError("invalid_input", "parseEntry's what (the name its refusals give the value) must be a string"));
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

/** Any array: its items are checked one by one after, stopping at the first bad one. */
const EntryListSchema = z.array(z.unknown());

/**
 * `entries` read once into an array of valid entries ({@link readEntry} of each, `entry <index>`),
 * or `invalid_input` (naming `what`) unless it is an array of valid entries. A caller reads the
 * answer, never `entries` again: a proxy or a getter that throws (or answers differently the
 * second time) is refused here, not met later as a throw.
 */
export function readEntries(entries: unknown, what: string): Result<TranscriptEntry[], KeelError> {
  const list = validate(EntryListSchema, entries, what);
  if (list.isErr()) return err(list.error);
  const checked: TranscriptEntry[] = [];
  for (let index = 0; index < list.value.length; index++) {
    const entry = readEntry(list.value[index], `entry ${index}`);
    if (entry.isErr()) return err(entry.error);
    checked.push(entry.value);
  }
  return ok(checked);
}
