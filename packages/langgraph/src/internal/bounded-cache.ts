/**
 * A least-recently-used map bounded by a total weight (e.g. characters of JSON text), for the
 * checkpointer's immutable reads: checkpoint documents (create-only) and content-addressed
 * channel blobs. An entry heavier than the whole bound is not kept.
 */
export class BoundedCache<V> {
  readonly #entries = new Map<string, { value: V; weight: number }>();
  readonly #maxWeight: number;
  #weight = 0;

  constructor(maxWeight: number) {
    this.#maxWeight = maxWeight;
  }

  /** The value under `key` (now the most recently used), or undefined. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` under `key`, evicting the least recently used entries over the bound. */
  set(key: string, value: V, weight: number): void {
    this.delete(key);
    if (weight > this.#maxWeight) return;
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    for (const [oldest, entry] of this.#entries) {
      if (this.#weight <= this.#maxWeight) break;
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
    }
  }

  /** Forgets `key`. */
  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
  }

  /** Forgets every key starting with `prefix`. */
  deletePrefix(prefix: string): void {
    for (const key of [...this.#entries.keys()]) if (key.startsWith(prefix)) this.delete(key);
  }
}
