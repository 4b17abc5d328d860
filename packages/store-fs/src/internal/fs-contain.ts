import fs from "node:fs";
import path from "node:path";
import { KeelError } from "@keel/core";
import { isErrno, type FsIo } from "./fs-io.js";

/**
 * Keeps every path the store opens inside its root: a directory of a key whose real path (links
 * resolved) is not its own path has a symbolic link on the way, which could take reads and writes
 * outside the store. Such an operation fails (`io_failed`, nothing read or written) and
 * `check()` reports the link.
 *
 * A directory found contained is remembered with its inode; each later use costs one `lstat`
 * (a directory replaced by a link, or moved, has another inode and is resolved again).
 */
export interface PathGuard {
  /** Throws unless `directory` (or, while it does not exist yet, its nearest existing ancestor) is inside the root without a link. */
  contain(directory: string): void;
}

const MAX_REMEMBERED = 4096;

/** Creates the {@link PathGuard} of a store whose root is `root` (a real path). */
export function createPathGuard(io: FsIo, root: string, realpath: (target: string) => string = fs.realpathSync.native): PathGuard {
  const verified = new Map<string, number>();
  const inodeOf = (directory: string): number | undefined => {
    try {
      const stat = io.lstatSync(directory);
      return stat.isDirectory() ? stat.ino : undefined;
    } catch (error) {
      if (isErrno(error, "ENOENT", "ENOTDIR")) return undefined;
      throw error;
    }
  };
  return {
    contain(directory) {
      const inode = inodeOf(directory);
      if (inode !== undefined && verified.get(directory) === inode) return;
      let existing = directory;
      for (;;) {
        if (existing.length < root.length) return;
        try {
          const real = realpath(existing);
          if (real !== existing) {
            throw new KeelError("io_failed", `${existing} is not where the store put it: a symbolic link on the way leads to ${real}; the store does not follow links (check() lists them)`, {
              details: { location: existing, target: real },
              retryable: false,
            });
          }
          break;
        } catch (error) {
          if (!isErrno(error, "ENOENT", "ENOTDIR")) throw error;
          existing = path.dirname(existing);
        }
      }
      if (existing === directory && inode !== undefined) {
        if (verified.size >= MAX_REMEMBERED) verified.clear();
        verified.set(directory, inode);
      }
    },
  };
}
