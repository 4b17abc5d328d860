import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { isSafeName } from "@keel/core";

/** The most document keys the directory walk collects. */
export const MAX_WALKED_KEYS = 100_000;

const RESERVED_SUFFIX = /\.(json|jsonl|bak)$/i;

/** The key segment of a directory name in the documented fs-store layout, or `undefined`. */
function segmentOfDirectory(name: string): string | undefined {
  // A segment that itself ends in .json, .jsonl or .bak is stored as a directory with a `~` suffix.
  if (name.endsWith("~")) {
    const segment = name.slice(0, -1);
    return RESERVED_SUFFIX.test(segment) && isSafeName(segment) ? segment : undefined;
  }
  return !RESERVED_SUFFIX.test(name) && isSafeName(name) ? name : undefined;
}

/** The key segment of a document file name (`<segment>.json`), or `undefined`. */
function segmentOfDocumentFile(name: string): string | undefined {
  if (!name.endsWith(".json")) return undefined;
  const segment = name.slice(0, -".json".length);
  return isSafeName(segment) ? segment : undefined;
}

/**
 * Finds the document keys of a filesystem store by walking its directory, following the layout
 * `createFsStore` documents (`<dir>/<key…>.json`; `.`-files are temporary, `_keel/` is the
 * store's own). Only used when the store's own listing fails, which it does as a whole when a
 * single document is damaged beyond its backup: the walk still finds that document's key, so
 * the inspector can show it as corrupt instead of showing nothing. Sorted; read-only.
 */
export async function walkDocumentKeys(root: string): Promise<string[][]> {
  const keys: string[][] = [];
  const walk = async (directory: string, segments: readonly string[]): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return;
      throw error;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (keys.length >= MAX_WALKED_KEYS) return;
      if (entry.name.startsWith(".") || (segments.length === 0 && entry.name === "_keel")) continue;
      if (entry.isDirectory()) {
        const segment = segmentOfDirectory(entry.name);
        if (segment !== undefined) await walk(path.join(directory, entry.name), [...segments, segment]);
      } else if (entry.isFile()) {
        const segment = segmentOfDocumentFile(entry.name);
        if (segment !== undefined) keys.push([...segments, segment]);
      }
    }
  };
  await walk(root, []);
  return keys;
}
