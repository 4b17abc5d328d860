import { monotonicFactory } from "ulid";

const nextUlid = monotonicFactory();

/**
 * A new unique, lexicographically sortable id (a ULID, 26 characters, safe as a {@link SafeName}).
 * Ids made in one process sort in creation order. Never use an id to order stored records:
 * stores assign versions and sequence numbers for that.
 */
export function newId(): string {
  return nextUlid();
}
