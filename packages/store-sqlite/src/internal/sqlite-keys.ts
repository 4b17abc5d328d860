/**
 * Keys in a table: segments joined by U+001F. Safe-name characters are all above U+002C, so the
 * separator sorts below any of them and byte order of the joined text is the port's
 * segment-by-segment order (a key before its longer extensions, "a" before "a-b").
 */
const SEPARATOR = "\u001f";
/** The character right after the separator: `prefix + SEPARATOR ≤ k < prefix + AFTER_SEPARATOR` selects a prefix. */
const AFTER_SEPARATOR = "\u0020";

/** The stored form of a key. */
export function encodeKey(segments: readonly string[]): string {
  return segments.join(SEPARATOR);
}

/** The segments of a stored key. */
export function decodeKey(text: string): string[] {
  return text.split(SEPARATOR);
}

/** The half-open range `[from, to)` of stored keys strictly below `prefix` (all keys for an empty prefix). */
export function prefixRange(prefix: readonly string[]): { from: string; to: string } {
  if (prefix.length === 0) return { from: "", to: "\u007f" };
  const base = encodeKey(prefix);
  return { from: base + SEPARATOR, to: base + AFTER_SEPARATOR };
}

/** The stored form of a listing cursor (a `keyCursor`: segments joined by `/`). */
export function encodeCursor(cursor: string | undefined): string {
  return cursor === undefined ? "" : encodeKey(cursor.split("/"));
}
