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
  if (typeof type === "string" && isKnownEntryType(type)) {
    return validate(ENTRY_SCHEMAS[type], value, `${what} (${type})`) as Result<TranscriptEntry, KeelError>;
  }
  return validate(UnknownEntrySchema, value, what) as Result<TranscriptEntry, KeelError>;
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
