import path from "node:path";
import type { FsContext } from "./fs-context.js";
import { isErrno } from "./fs-io.js";
import { INTERNAL_DIRECTORY, segmentOfDirectory, segmentOfDocFile } from "./fs-paths.js";

/**
 * Document keys in key order, a page at a time, without walking or sorting the whole prefix per
 * page.
 *
 * Keys are compared segment by segment, shorter first on a tie, so the key order is a
 * depth-first walk of the directories with each directory's entries sorted by segment (a
 * document `x.json` before the directory `x/` of its children). A page starts from its cursor by
 * binary search in each directory on the cursor's path, and stops after `limit` keys.
 *
 * Each directory's sorted entries are remembered with its inode and modification time (in
 * nanoseconds), and reused while both are unchanged. A modification time does not move within
 * one tick of the kernel's coarse clock, so a listing read less than {@link SETTLE_NS} after the
 * directory last changed is not reused (a change in the same tick would not show); this store's
 * own creations drop the entries of their directories at once.
 */

interface Entry {
  segment: string;
  /** A document file, or a directory of child keys. */
  kind: "doc" | "directory";
  name: string;
}

interface Remembered {
  ino: bigint;
  mtimeNs: bigint;
  entries: Entry[];
}

/** How long after a directory's last change its remembered entries may be trusted. */
const SETTLE_NS = 100_000_000n;
/** Directories remembered per store (least recently used dropped beyond this). */
const MAX_REMEMBERED = 256;

/** The ordered document keys of one store. */
export interface DocListing {
  /** The keys under `prefix` (any depth) after the cursor `after`, in key order, read lazily. */
  keysAfter(prefix: readonly string[], after: string | undefined): Iterable<string[]>;
  /** This store created `key`'s file: the listings of its directories are out of date. */
  added(key: readonly string[]): void;
}

const bySegment = (left: Entry, right: Entry) =>
  left.segment < right.segment ? -1 : left.segment > right.segment ? 1 : left.kind === right.kind ? 0 : left.kind === "doc" ? -1 : 1;

/** Creates the {@link DocListing} of a store. */
export function createDocListing(context: FsContext): DocListing {
  const remembered = new Map<string, Remembered>();

  const entriesOf = (directory: string, atRoot: boolean): Entry[] => {
    let stat;
    try {
      stat = context.io.lstatBigIntSync(directory);
    } catch (error) {
      if (isErrno(error, "ENOENT", "ENOTDIR")) return [];
      throw error;
    }
    if (!stat.isDirectory()) return [];
    const known = remembered.get(directory);
    if (known && known.ino === stat.ino && known.mtimeNs === stat.mtimeNs) {
      remembered.delete(directory);
      remembered.set(directory, known);
      return known.entries;
    }
    const readAt = BigInt(Date.now()) * 1_000_000n;
    const entries: Entry[] = [];
    for (const dirent of context.io.readdirSync(directory)) {
      const name = dirent.name;
      if (name.startsWith(".") || (atRoot && name === INTERNAL_DIRECTORY)) continue;
      // Never followed: a link is neither a file nor a directory here (check() reports it).
      if (dirent.isDirectory()) {
        const segment = segmentOfDirectory(name);
        if (segment !== undefined) entries.push({ segment, kind: "directory", name });
      } else if (dirent.isFile()) {
        const segment = segmentOfDocFile(name);
        if (segment !== undefined) entries.push({ segment, kind: "doc", name });
      }
    }
    entries.sort(bySegment);
    remembered.delete(directory);
    if (readAt - stat.mtimeNs > SETTLE_NS) {
      remembered.set(directory, { ino: stat.ino, mtimeNs: stat.mtimeNs, entries });
      if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
    }
    return entries;
  };

  /** The first index whose segment is at least `segment`. */
  const firstAtLeast = (entries: readonly Entry[], segment: string) => {
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (entries[middle]!.segment < segment) low = middle + 1;
      else high = middle;
    }
    return low;
  };

  function* walk(directory: string, segments: string[], cursor: readonly string[] | undefined): Generator<string[]> {
    const entries = entriesOf(directory, segments.length === 0);
    const depth = segments.length;
    const bound = cursor?.[depth];
    for (let index = bound === undefined ? 0 : firstAtLeast(entries, bound); index < entries.length; index++) {
      const entry = entries[index]!;
      const key = [...segments, entry.segment];
      const onCursorPath = bound !== undefined && entry.segment === bound;
      if (entry.kind === "doc") {
        // A key on the cursor's path is the cursor itself or one of its ancestors: not after it.
        if (!onCursorPath) yield key;
        continue;
      }
      // Below the cursor's own key every key is after it; on its path the cursor goes on down.
      yield* walk(path.join(directory, entry.name), key, onCursorPath && cursor!.length > depth + 1 ? cursor : undefined);
    }
  }

  return {
    *keysAfter(prefix, after) {
      let cursor: string[] | undefined = after === undefined ? undefined : after.split("/");
      if (cursor) {
        for (let index = 0; index < prefix.length; index++) {
          const part = cursor[index];
          if (part === undefined || part < prefix[index]!) {
            cursor = undefined;
            break;
          }
          if (part > prefix[index]!) return;
        }
        // A cursor at the prefix itself (or above it): every key below the prefix is after it.
        if (cursor && cursor.length <= prefix.length) cursor = undefined;
      }
      const directory = context.paths.directoryOf(prefix);
      // The prefix's own directory through the guard; below it, links are never walked into.
      if (prefix.length > 0) context.guard.contain(directory);
      yield* walk(directory, [...prefix], cursor);
    },
    added(key) {
      for (let depth = 0; depth < key.length; depth++) remembered.delete(context.paths.directoryOf(key.slice(0, depth)));
    },
  };
}
