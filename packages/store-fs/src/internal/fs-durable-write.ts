import path from "node:path";
import { closeQuietly, fsyncDirectory, fsyncDirectorySync, isErrno, notStoreFile, OPEN_CREATE_EXCLUSIVE, unlinkQuietly, writeAll, type FsIo } from "./fs-io.js";
import { BACKUP_SUFFIX, temporaryPath } from "./fs-paths.js";


/**
 * The directories from `directory` up to (not including) `root` that are missing, deepest
 * first. A link, a FIFO or a device on the way is refused ({@link notStoreFile}): never
 * followed, never created through (a plain file fails with `ENOTDIR`).
 */
function missingDirectories(io: FsIo, root: string, directory: string): string[] {
  const missing: string[] = [];
  let current = directory;
  while (current.length > root.length && current.startsWith(root)) {
    try {
      const stat = io.lstatSync(current);
      if (stat.isDirectory()) break;
      if (!stat.isFile()) throw notStoreFile(current);
      throw Object.assign(new Error(`${current} exists and is not a directory`), { code: "ENOTDIR", path: current });
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
    }
    missing.push(current);
    current = path.dirname(current);
  }
  return missing;
}

/** Makes `created`, a directory whose parent exists; true unless another process made it first. */
function makeDirectory(io: FsIo, created: string): boolean {
  try {
    io.mkdirSync(created);
    return true;
  } catch (error) {
    if (!isErrno(error, "EEXIST")) throw error;
    if (!io.lstatSync(created).isDirectory()) throw notStoreFile(created);
    return false;
  }
}

/**
 * Creates `directory` and its missing ancestors below `root`, fsyncing the parent of each one
 * created so that the new entries survive a power loss.
 */
export async function ensureDirectory(io: FsIo, root: string, directory: string): Promise<void> {
  for (const created of missingDirectories(io, root, directory).reverse()) {
    makeDirectory(io, created);
    await fsyncDirectory(io, path.dirname(created));
  }
}

/** {@link ensureDirectory}, synchronously (while a store is opened). */
export function ensureDirectorySync(io: FsIo, root: string, directory: string): void {
  for (const created of missingDirectories(io, root, directory).reverse()) {
    makeDirectory(io, created);
    fsyncDirectorySync(io, path.dirname(created));
  }
}

/** Options of {@link writeFileDurably}. */
export interface DurableWriteOptions {
  /** The store root (directories are created below it, never above). */
  root: string;
  /** Keep the file being replaced as `<target>.bak` (hard-linked, then renamed into place). */
  backup: boolean;
}

/**
 * Replaces `target` with `bytes` atomically and durably: a staging file unique to this call
 * (O_EXCL) → full write → fsync, and while it runs (hard-link the current file to the `.bak`
 * staging name → rename it over `.bak`) → rename the staging file over `target` → fsync the
 * directory.
 * A reader sees the old or the new content, never a mix; a crash at any point leaves the old or
 * the new file plus, at worst, a leftover staging file that `check()` removes.
 */
export async function writeFileDurably(io: FsIo, target: string, bytes: Uint8Array, options: DurableWriteOptions): Promise<void> {
  const directory = path.dirname(target);
  const staging = temporaryPath(target);
  let fd: number | undefined;
  let backupStaging: string | undefined;
  try {
    try {
      fd = io.openSync(staging, OPEN_CREATE_EXCLUSIVE, 0o644);
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
      await ensureDirectory(io, options.root, directory);
      fd = io.openSync(staging, OPEN_CREATE_EXCLUSIVE, 0o644);
    }
    writeAll(io, fd, bytes, 0);
    const syncing = io.fsync(fd);
    // The backup is made while the staging file's fsync runs (in the thread pool): two metadata
    // calls off the put's critical path. A crash or a failure after it leaves the file and its
    // backup at the same version, which keeps the rule that the file is at most one version
    // above its backup.
    let backupError: unknown;
    if (options.backup) {
      backupStaging = temporaryPath(`${target}${BACKUP_SUFFIX}`);
      try {
        io.linkSync(target, backupStaging);
        io.renameSync(backupStaging, `${target}${BACKUP_SUFFIX}`);
        backupStaging = undefined;
      } catch (error) {
        if (!isErrno(error, "ENOENT")) backupError = error;
        else backupStaging = undefined;
      }
    }
    // The fd stays open until its fsync is done, whatever failed meanwhile.
    await syncing;
    if (backupError !== undefined) throw backupError;
    const closing = fd;
    fd = undefined;
    io.closeSync(closing);
    io.renameSync(staging, target);
  } catch (error) {
    closeQuietly(io, fd);
    unlinkQuietly(io, staging);
    unlinkQuietly(io, backupStaging);
    throw error;
  }
  await fsyncDirectory(io, directory);
}

/**
 * Replaces `target` with `bytes` atomically and durably, synchronously and without a backup:
 * staging file → write → fsync → rename → fsync the directory. For the few small files written
 * while a store is opened, whose loss in a power cut would make the store unopenable or lose a
 * lease's holder (the layout marker, a long holder's name at a layout upgrade).
 */
export function writeFileDurablySync(io: FsIo, target: string, bytes: Uint8Array): void {
  replaceFileSync(io, target, bytes, true);
  fsyncDirectorySync(io, path.dirname(target));
}

/**
 * Replaces `target` with `bytes` atomically but without fsync (a staging file renamed over it):
 * for caches whose loss or damage in a machine crash is harmless (the id sidecars of logs, checked
 * on load and rebuilt).
 */
export function writeFileAtomicSync(io: FsIo, target: string, bytes: Uint8Array): void {
  replaceFileSync(io, target, bytes, false);
}

/** Staging file → write → (fsync) → rename over `target`; a failed write leaves no staging file behind. */
function replaceFileSync(io: FsIo, target: string, bytes: Uint8Array, fsync: boolean): void {
  const staging = temporaryPath(target);
  try {
    const fd = io.openSync(staging, OPEN_CREATE_EXCLUSIVE, 0o644);
    try {
      writeAll(io, fd, bytes, 0);
      if (fsync) io.fsyncSync(fd);
    } finally {
      io.closeSync(fd);
    }
    io.renameSync(staging, target);
  } catch (error) {
    unlinkQuietly(io, staging);
    throw error;
  }
}
