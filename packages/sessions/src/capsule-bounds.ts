import { TRUNCATION_MARKER, truncateUtf8, utf8Bytes } from "@keel/core";
import { CAPSULE_LIMITS, type Capsule } from "./capsule-schema.js";

const LIST_MARKER = /^…\[truncated by keel: (\d+) earlier entries dropped\]$/;

/** The capsule fields that can be truncated. */
export type TruncatableField = "repositoryMap" | "decisiveOutput" | "referencedPaths" | "inspectedPaths" | "openCheckpointItems" | "lastFailure";

/** What {@link boundCapsule} returns. */
export interface BoundedCapsule {
  /** The capsule within {@link CAPSULE_LIMITS}. */
  capsule: Capsule;
  /** The fields that were truncated (each once), empty when nothing was. */
  truncated: TruncatableField[];
}

/** The number of entries a list's marker says were dropped (0 without a marker). */
function droppedBefore(list: readonly string[]): number {
  const match = list[0] === undefined ? null : LIST_MARKER.exec(list[0]);
  return match ? Number(match[1]) : 0;
}

/** Removes a leading list marker. */
export function withoutListMarker(list: readonly string[]): string[] {
  return droppedBefore(list) > 0 ? list.slice(1) : [...list];
}

/**
 * Keeps the newest `maxEntries` entries of a list (each cut to `maxEntryBytes`), and when older
 * entries go, puts a marker first that counts every entry dropped so far.
 */
export function truncateList(list: readonly string[], maxEntries: number, maxEntryBytes: number): string[] {
  const earlier = droppedBefore(list);
  const entries = withoutListMarker(list).map((entry) => truncateUtf8(entry, maxEntryBytes));
  const keep = Math.max(0, maxEntries);
  if (entries.length <= keep) return earlier > 0 ? [listMarker(earlier), ...entries] : entries;
  const dropped = entries.length - keep;
  return [listMarker(earlier + dropped), ...entries.slice(dropped)];
}

function listMarker(dropped: number): string {
  return `${TRUNCATION_MARKER} ${dropped} earlier entries dropped]`;
}

// Key order does not change a JSON text's length: plain JSON.stringify measures what the store writes.
const jsonBytes = (value: unknown) => utf8Bytes(JSON.stringify(value) ?? "null");

/**
 * Brings a capsule within {@link CAPSULE_LIMITS}: each text and list is cut to its own bound, and
 * while the whole is over 64 KiB the largest truncatable field is halved. Every cut leaves an
 * explicit marker and is named in `truncated`; a capsule within bounds comes back unchanged.
 * Pure: it never throws on a capsule of the right shape.
 */
export function boundCapsule(candidate: Capsule): BoundedCapsule {
  const truncated = new Set<TruncatableField>();
  // Fields are replaced, never changed in place: a shallow copy leaves the candidate as it was.
  const capsule: Capsule = { ...candidate };
  const setText = (field: "repositoryMap" | "decisiveOutput", maxBytes: number) => {
    const value = capsule[field];
    if (value === null) return;
    const next = truncateUtf8(value, maxBytes);
    if (next !== value) {
      capsule[field] = next;
      truncated.add(field);
    }
  };
  const setList = (field: "referencedPaths" | "inspectedPaths" | "openCheckpointItems", maxEntries: number, maxEntryBytes: number) => {
    const value = capsule[field];
    const next = truncateList(value, maxEntries, maxEntryBytes);
    if (next.length !== value.length || next.some((entry, index) => entry !== value[index])) {
      capsule[field] = next;
      truncated.add(field);
    }
  };
  setText("repositoryMap", CAPSULE_LIMITS.maxTextBytes);
  setText("decisiveOutput", CAPSULE_LIMITS.maxTextBytes);
  setList("referencedPaths", CAPSULE_LIMITS.maxPaths, CAPSULE_LIMITS.maxPathBytes);
  setList("inspectedPaths", CAPSULE_LIMITS.maxPaths, CAPSULE_LIMITS.maxPathBytes);
  setList("openCheckpointItems", CAPSULE_LIMITS.maxItems, CAPSULE_LIMITS.maxItemBytes);
  if (capsule.lastFailure) {
    const message = truncateUtf8(capsule.lastFailure.message, CAPSULE_LIMITS.maxMessageBytes);
    if (message !== capsule.lastFailure.message) {
      capsule.lastFailure = { ...capsule.lastFailure, message };
      truncated.add("lastFailure");
    }
  }
  shrinkToTotal(capsule, truncated);
  return { capsule, truncated: [...truncated] };
}

/** Halves the largest truncatable field until the capsule fits `CAPSULE_LIMITS.maxBytes`. */
function shrinkToTotal(capsule: Capsule, truncated: Set<TruncatableField>): void {
  for (let total = jsonBytes(capsule); total > CAPSULE_LIMITS.maxBytes; total = jsonBytes(capsule)) {
    const sizes: [Exclude<TruncatableField, "lastFailure">, number][] = [
      ["repositoryMap", jsonBytes(capsule.repositoryMap)],
      ["decisiveOutput", jsonBytes(capsule.decisiveOutput)],
      ["referencedPaths", jsonBytes(withoutListMarker(capsule.referencedPaths))],
      ["inspectedPaths", jsonBytes(withoutListMarker(capsule.inspectedPaths))],
      ["openCheckpointItems", jsonBytes(withoutListMarker(capsule.openCheckpointItems))],
    ];
    sizes.sort((left, right) => right[1] - left[1]);
    const [field] = sizes[0]!;
    truncated.add(field);
    if (field === "repositoryMap" || field === "decisiveOutput") {
      const value = capsule[field] ?? "";
      const half = Math.floor(utf8Bytes(value) / 2);
      // A value already no longer than its marker goes entirely.
      const next = truncateUtf8(value, half);
      capsule[field] = next.length < value.length ? next : null;
    } else {
      const entries = withoutListMarker(capsule[field]);
      capsule[field] = truncateList(capsule[field], Math.floor(entries.length / 2), Number.MAX_SAFE_INTEGER);
    }
  }
}
