import { utf8Bytes } from "@keel/core";

/** Byte bounds of what the engine answers (the numbers). */
export const RESPONSE_LIMITS = Object.freeze({
  /** One handoff packet's JSON. */
  packetBytes: 12_000,
  /** All packets of one role fed to a stage. */
  roleBytes: 16_000,
  /** A `status` answer. */
  statusBytes: 16_000,
  /** One `step` answer. */
  stepBytes: 40_000,
});

/** The marker that ends cut text: what was left out is always said, never silently dropped. */
export function cutMarker(omittedBytes: number): string {
  return `\n[… cut by keel: ${omittedBytes} bytes omitted]`;
}

/**
 * Cuts `text` so that it takes at most `maxBytes` UTF-8 bytes including the marker, on a
 * character boundary. Text that fits comes back unchanged with `cut: false`.
 */
export function cutText(text: string, maxBytes: number): { text: string; cut: boolean; omittedBytes: number } {
  const bytes = utf8Bytes(text);
  if (bytes <= maxBytes) return { text, cut: false, omittedBytes: 0 };
  const buffer = Buffer.from(text, "utf8");
  // The marker's own length depends on the number it prints: reserve for the widest.
  let keep = Math.max(0, maxBytes - utf8Bytes(cutMarker(bytes)));
  // Step back over UTF-8 continuation bytes so no character is split.
  while (keep > 0 && (buffer[keep]! & 0xc0) === 0x80) keep--;
  const kept = buffer.subarray(0, keep).toString("utf8");
  const omittedBytes = bytes - keep;
  return { text: kept + cutMarker(omittedBytes), cut: true, omittedBytes };
}
