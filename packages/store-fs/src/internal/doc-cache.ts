import type { JsonValue } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { decodeDocEnvelope, type DocEnvelope } from "./doc-envelope.js";

/**
 * Remembers the verified decoding of recently read or written document files, keyed by their
 * exact bytes. Verifying a document (parse, JSON text of the value, sha256) costs far more
 * than reading it; a file whose bytes are identical to ones already verified decodes to the same
 * envelope, so only the bytes are compared (every read still reads the file: a change by
 * another process, or damage, is a byte difference and is verified from scratch).
 *
 * Kept for speed: it serves the durable put's CPU target (within 2× the floor, bench/store-fs.bench.ts;
 * issue 31): a put's read of the current version costs 0.3 µs from here, 160 µs verified (6.6 KB).
 */
export interface DocCache {
  /**
   * Decodes `bytes` read from `file` as the document `key`: verified, or from the cache for
   * identical bytes. Without `withValue`, a remembered envelope comes with `value: null` (the
   * value is not parsed again for a caller that needs only the version).
   */
  decode(file: string, bytes: Buffer, key: readonly string[], withValue: boolean): Result<DocEnvelope, string>;
  /** Remembers the bytes this store just wrote to `file`. */
  remember(file: string, bytes: Buffer, key: readonly string[], envelope: Omit<DocEnvelope, "key" | "value">, valueText: string): void;
}

interface Entry {
  bytes: Buffer;
  keyText: string;
  version: number;
  updatedAt: string;
  deleted: boolean;
  size: number;
  valueText: string;
}

/** Files larger than this are not remembered. */
const MAX_ENTRY_BYTES = 256 * 1024;
/** Total bytes (file bytes and value text) remembered per store. */
const MAX_TOTAL_BYTES = 4 * 1024 * 1024;

/** Creates an empty {@link DocCache}. */
export function createDocCache(): DocCache {
  const entries = new Map<string, Entry>();
  let total = 0;

  const forget = (file: string) => {
    const entry = entries.get(file);
    if (!entry) return;
    entries.delete(file);
    total -= entry.bytes.length + entry.valueText.length;
  };
  const store = (file: string, entry: Entry) => {
    forget(file);
    const size = entry.bytes.length + entry.valueText.length;
    if (entry.bytes.length > MAX_ENTRY_BYTES) return;
    entries.set(file, entry);
    total += size;
    // Least recently used first: a hit moves its entry to the end.
    for (const [oldest] of entries) {
      if (total <= MAX_TOTAL_BYTES) break;
      forget(oldest);
    }
  };

  return {
    decode(file, bytes, key, withValue) {
      const keyText = key.join("/");
      const entry = entries.get(file);
      if (entry && entry.keyText === keyText && entry.bytes.equals(bytes)) {
        entries.delete(file);
        entries.set(file, entry);
        // A fresh copy of the value for each caller (callers may change what they get).
        const value = withValue ? (JSON.parse(entry.valueText) as JsonValue) : null;
        return ok({ key: [...key], version: entry.version, updatedAt: entry.updatedAt, deleted: entry.deleted, value, bytes: entry.size });
      }
      const decoded = decodeDocEnvelope(bytes.toString("utf8"), key);
      if (decoded.isErr()) {
        forget(file);
        return err(decoded.error);
      }
      const { valueText, ...envelope } = decoded.value;
      store(file, { bytes, keyText, version: envelope.version, updatedAt: envelope.updatedAt, deleted: envelope.deleted, size: envelope.bytes, valueText });
      return ok(envelope);
    },
    remember(file, bytes, key, envelope, valueText) {
      store(file, { bytes, keyText: key.join("/"), version: envelope.version, updatedAt: envelope.updatedAt, deleted: envelope.deleted, size: envelope.bytes, valueText });
    },
  };
}
