/**
 * Keys as one text column, for SQL adapters: segments joined by U+001F. Safe-name characters
 * are all above U+002C, so the separator sorts below any of them and the byte order of the
 * joined text (SQLite's default, PostgreSQL's `COLLATE "C"`) is the port's segment-by-segment
 * order: a key before its longer extensions, "a" before "a-b".
 */
const SEPARATOR = "\u001f";
/** The character right after the separator: `prefix + SEPARATOR ≤ k < prefix + AFTER_SEPARATOR` selects a prefix. */
const AFTER_SEPARATOR = "\u0020";

/** The stored text of a key (segments joined by U+001F), ordered byte by byte as the port orders keys. */
export function encodeKeyText(segments: readonly string[]): string {
  return segments.join(SEPARATOR);
}

/** The segments of a key stored by {@link encodeKeyText}. */
export function decodeKeyText(text: string): string[] {
  return text.split(SEPARATOR);
}

/** The half-open range `[from, to)` of stored key texts strictly below `prefix` (all keys for an empty prefix). */
export function keyTextPrefixRange(prefix: readonly string[]): { from: string; to: string } {
  if (prefix.length === 0) return { from: "", to: "\u007f" };
  const base = encodeKeyText(prefix);
  return { from: base + SEPARATOR, to: base + AFTER_SEPARATOR };
}

/** The stored text of a listing cursor (a `keyCursor`: segments joined by `/`); `""` for none. */
export function encodeCursorText(cursor: string | undefined): string {
  return cursor === undefined ? "" : encodeKeyText(cursor.split("/"));
}
