/** The identity of a stored document's content: a store never gives two contents of one key the same version and time. */
export interface DocStamp {
  version: number;
  updatedAt: string;
}

/**
 * Remembers a value derived from a stored document (a parsed capsule, a validated checkpoint)
 * together with the document's version and time, so that reading the same document again does
 * not validate it again. Least recently used entries go first beyond `limit`.
 */
export interface DocMemo<T> {
  /** The value remembered for `key` when it was derived from the document stamped `stamp`. */
  get(key: string, stamp: DocStamp): T | undefined;
  /** Remembers `value` for `key`, derived from the document stamped `stamp`. */
  set(key: string, stamp: DocStamp, value: T): void;
}

/** Creates an empty {@link DocMemo} of at most `limit` entries. */
export function createDocMemo<T>(limit = 512): DocMemo<T> {
  const entries = new Map<string, { version: number; updatedAt: string; value: T }>();
  return {
    get(key, stamp) {
      const entry = entries.get(key);
      if (!entry || entry.version !== stamp.version || entry.updatedAt !== stamp.updatedAt) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    set(key, stamp, value) {
      entries.delete(key);
      entries.set(key, { version: stamp.version, updatedAt: stamp.updatedAt, value });
      if (entries.size > limit) entries.delete(entries.keys().next().value as string);
    },
  };
}
