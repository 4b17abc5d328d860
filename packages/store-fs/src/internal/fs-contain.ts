import fs from "node:fs";
import path from "node:path";
import { KeelError } from "@keel/core";
import { isErrno, notStoreFile, type FsIo } from "./fs-io.js";

/**
 * Keeps every path the store uses inside its root. Two halves, one for each part of a path:
 *
 * - the last component: every file is opened with `O_NOFOLLOW | O_NONBLOCK` and checked to be a
 *   regular file (`openContained` in fs-io.ts, the one place files are opened); renames,
 *   `link`, `unlink` and `lstat` act on a link itself, never on what it points at;
 * - the directories on the way (this guard): a directory whose real path (links resolved) is
 *   not its own path has a symbolic link on the way, which could take reads and writes outside
 *   the store. The guard is asked before each operation that uses a directory: a key's
 *   directory, a lock directory, a lease directory, the internal directories under `_keel/`.
 *
 * Either refusal is `corrupt` naming the path (nothing read or written through it); `check()`
 * reports the entry and `check({ repair: true })` moves it into quarantine.
 *
 * A directory found contained is remembered with its inode; each later use costs one `lstat`
 * (a directory replaced by a link, or moved, has another inode and is resolved again).
 */
export interface PathGuard {
  /** Throws `corrupt` unless `directory` (or, while it does not exist yet, its nearest existing ancestor) is inside the root without a link. */
  contain(directory: string): void;
}

const MAX_REMEMBERED = 4096;

/** The first entry from `root` down to `directory` that is not a directory (the link to name), else `directory`. */
function linkOnTheWay(io: FsIo, root: string, directory: string): string {
  const parts = path.relative(root, directory).split(path.sep);
  let current = root;
  for (const part of parts) {
    current = path.join(current, part);
    try {
      if (!io.lstatSync(current).isDirectory()) return current;
    } catch {
      return current;
    }
  }
  return directory;
}

/** Creates the {@link PathGuard} of a store whose root is `root` (a real path). */
export function createPathGuard(io: FsIo, root: string, realpath: (target: string) => string = fs.realpathSync.native): PathGuard {
  const verified = new Map<string, number>();
  const inodeOf = (directory: string): number | undefined => {
    let stat;
    try {
      stat = io.lstatSync(directory);
    } catch (error) {
      if (isErrno(error, "ENOENT", "ENOTDIR")) return undefined;
      throw error;
    }
    if (stat.isDirectory()) return stat.ino;
    // A link, a FIFO or a device where the store keeps a directory (a plain file fails the operation with ENOTDIR).
    if (!stat.isFile()) throw notStoreFile(directory);
    return undefined;
  };
  return {
    contain(directory) {
      const inode = inodeOf(directory);
      if (inode !== undefined && verified.get(directory) === inode) return;
      let existing = directory;
      for (;;) {
        if (existing.length < root.length) return;
        // An ancestor that is a link (even a dangling one), a FIFO or a device: refused by name.
        if (existing !== directory) inodeOf(existing);
        try {
          const real = realpath(existing);
          if (real !== existing) {
            throw new KeelError(
              "corrupt",
              `${existing} is not where the store put it: a symbolic link on the way leads elsewhere; the store never follows one (check() reports it, check({ repair: true }) moves it into quarantine)`,
              { details: { location: linkOnTheWay(io, root, existing), problem: "a symbolic link" }, retryable: false },
            );
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
