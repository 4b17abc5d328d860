import { KeelError } from "./errors.js";
import { utf8Bytes } from "./json.js";
import { isCount } from "./validate.js";

/**
 * Every truncation marker Keel writes into stored text starts with this text, so a reader (or a
 * model) can tell a cut from the original: `…[truncated by keel: N bytes dropped]` at the end of
 * a cut text, `…[truncated by keel: N earlier entries dropped]` first in a cut list.
 */
export const TRUNCATION_MARKER = "…[truncated by keel:";

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes, on a code point boundary (never half a
 * character or half a surrogate pair), ending with the marker `…[truncated by keel: N bytes
 * dropped]` that says how many bytes were dropped. Text within the bound comes back unchanged;
 * a bound too small for the marker itself gives `""`. Pure; a `text` that is not a string or a
 * `maxBytes` that is not a non-negative safe integer throws `invalid_input`.
 *
 * @example
 * ```ts
 * truncateUtf8("The quick brown fox jumps over the lazy dog, twice over", 48);
 * // "The quic…[truncated by keel: 47 bytes dropped]" (48 bytes)
 * ```
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (typeof text !== "string") throw new KeelError("invalid_input", `truncateUtf8: text must be a string, got ${typeof text}`);
  if (!isCount(maxBytes)) throw new KeelError("invalid_input", `truncateUtf8: maxBytes must be a non-negative integer, got ${String(maxBytes)}`);
  const total = utf8Bytes(text);
  if (total <= maxBytes) return text;
  const markerFor = (dropped: number) => `${TRUNCATION_MARKER} ${dropped} bytes dropped]`;
  const room = Math.max(0, maxBytes - utf8Bytes(markerFor(total)));
  let kept = 0;
  let end = 0;
  for (const character of text) {
    const size = utf8Bytes(character);
    if (kept + size > room) break;
    kept += size;
    end += character.length;
  }
  const marker = markerFor(total - kept);
  return utf8Bytes(marker) <= maxBytes ? `${text.slice(0, end)}${marker}` : "";
}
