import type { Dirent } from "node:fs";
import path from "node:path";
import type { FsContext } from "./fs-context.js";
import { isErrno } from "./fs-io.js";
import { INTERNAL_DIRECTORY, segmentOfDirectory } from "./fs-paths.js";

/**
 * Walks the directories under `prefix` (any depth) and returns the keys of the files that
 * `segmentOfFile` recognises (and `accept`, if given, keeps), unsorted. Skips temporary files
 * (`.…`), the internal `_keel` directory and anything whose name is not a key segment.
 */
export function collectKeys(
  context: FsContext,
  prefix: readonly string[],
  segmentOfFile: (name: string) => string | undefined,
  accept: (file: string) => boolean = () => true,
): string[][] {
  const keys: string[][] = [];
  const walk = (directory: string, segments: readonly string[]) => {
    let entries: Dirent[];
    try {
      entries = context.io.readdirSync(directory);
    } catch (error) {
      if (isErrno(error, "ENOENT", "ENOTDIR")) return;
      throw error;
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".") || (segments.length === 0 && entry.name === INTERNAL_DIRECTORY)) continue;
      const full = path.join(directory, entry.name);
      const kind = entry.isDirectory() || entry.isFile() ? entry : context.io.lstatSync(full);
      if (kind.isDirectory()) {
        const segment = segmentOfDirectory(entry.name);
        if (segment !== undefined) walk(full, [...segments, segment]);
      } else if (kind.isFile()) {
        const segment = segmentOfFile(entry.name);
        if (segment !== undefined && accept(full)) keys.push([...segments, segment]);
      }
    }
  };
  const directory = context.paths.directoryOf(prefix);
  // The prefix's own directory through the guard; below it, links are never walked into.
  if (prefix.length > 0) context.guard.contain(directory);
  walk(directory, prefix);
  return keys;
}
