import { digest, type KeelEvent } from "@keel/core";

/**
 * Assigns idempotent record ids: `<digest hex>.<n>` where `n` counts the distinct event objects
 * with that content seen by this assigner. The same object always gets the same id (a retried
 * append is deduplicated by the store); two different emits with identical content get different
 * ids (both are kept); replaying the same sequence into a fresh assigner gives the same ids (an
 * import repeated is a no-op).
 *
 * Identical content means an identical `at`, so such events arrive close together: occurrence
 * counts are kept for the most recent {@link OCCURRENCE_MEMORY} distinct contents only, which
 * bounds memory in a long-running host.
 */
export interface EventIdAssigner {
  idOf(original: object, prepared: KeelEvent): string;
}

/** How many distinct event contents the occurrence counter remembers. */
export const OCCURRENCE_MEMORY = 10_000;

/** Creates an {@link EventIdAssigner}. */
export function createEventIdAssigner(): EventIdAssigner {
  const byObject = new WeakMap<object, string>();
  const occurrences = new Map<string, number>();
  return {
    idOf(original, prepared) {
      const known = byObject.get(original);
      if (known !== undefined) return known;
      const hex = digest(prepared).slice("sha256:".length);
      const occurrence = (occurrences.get(hex) ?? 0) + 1;
      occurrences.delete(hex);
      occurrences.set(hex, occurrence);
      if (occurrences.size > OCCURRENCE_MEMORY) {
        const oldest = occurrences.keys().next();
        if (!oldest.done) occurrences.delete(oldest.value);
      }
      const id = `${hex}.${occurrence}`;
      byObject.set(original, id);
      return id;
    },
  };
}
