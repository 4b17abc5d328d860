import { constants, promises as fs, type Stats } from "node:fs";

/**
 * The file-system calls that the managing operations (import, library install and update,
 * withdraw, visibility) make, behind one seam so that tests can inject a fault at any step (a full disk
 * while copying, a refused rename during the swap) without mocking node internals.
 * {@link nodeSkillIo} is the real file system; pass another through the operations' `io`
 * option only in tests.
 */
export interface SkillIo {
  /** `lstat` (never follows a final symlink). */
  lstat(path: string): Promise<Stats>;
  /** The canonical path (`realpath`). */
  realpath(path: string): Promise<string>;
  /** The names in a directory (unsorted). */
  readdir(path: string): Promise<string[]>;
  /** A whole file. */
  readFile(path: string): Promise<Buffer>;
  /** Creates a new file (never replacing one), writes `bytes` and fsyncs it before closing. */
  writeFile(path: string, bytes: Uint8Array): Promise<void>;
  /** Creates one directory (not its parents); `EEXIST` when it is there. */
  mkdir(path: string): Promise<void>;
  /** Atomic rename within one file system. */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file or a whole tree; nothing when it is absent. */
  rm(path: string): Promise<void>;
  /** Removes an empty directory. */
  rmdir(path: string): Promise<void>;
  /** Removes a file (or a symbolic link, not what it points to). */
  unlink(path: string): Promise<void>;
  /** Creates a symbolic link at `path` holding `target` (a managed skill's link to its version). */
  symlink(target: string, path: string): Promise<void>;
  /** The target a symbolic link holds, as written. */
  readlink(path: string): Promise<string>;
  /** fsyncs a directory so that renames and creations in it survive a power loss (best effort where unsupported). */
  syncDirectory(path: string): Promise<void>;
}

/** The real file system. */
export const nodeSkillIo: SkillIo = {
  lstat: (path) => fs.lstat(path),
  realpath: (path) => fs.realpath(path),
  readdir: (path) => fs.readdir(path),
  readFile: (path) => fs.readFile(path),
  writeFile: async (path, bytes) => {
    const handle = await fs.open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
    try {
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written);
        written += bytesWritten;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  mkdir: async (path) => {
    await fs.mkdir(path);
  },
  rename: (from, to) => fs.rename(from, to),
  rm: (path) => fs.rm(path, { recursive: true, force: true }),
  rmdir: (path) => fs.rmdir(path),
  unlink: (path) => fs.unlink(path),
  symlink: (target, path) => fs.symlink(target, path, "dir"),
  readlink: (path) => fs.readlink(path),
  syncDirectory: async (path) => {
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(path, constants.O_RDONLY);
      await handle.sync();
    } catch (error) {
      // Some platforms and file systems cannot fsync a directory (EISDIR, EINVAL, EPERM on Windows).
      const code = (error as { code?: string }).code;
      if (code !== "EISDIR" && code !== "EINVAL" && code !== "EPERM" && code !== "ENOTSUP") throw error;
    } finally {
      await handle?.close();
    }
  },
};

/** The errno code of a thrown value, if any. */
export function errnoOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as { code?: string }).code : undefined;
}
