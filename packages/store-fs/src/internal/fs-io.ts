import fs, { type BigIntStats, type Dirent, type Stats } from "node:fs";
import { KeelError, type JsonValue } from "@keel/core";

/**
 * The file-system calls the store makes, behind one seam so that tests can inject faults
 * (ENOSPC on a write, EROFS on a rename, a failing fsync) without root tricks.
 *
 * Metadata calls and small reads/writes are synchronous on purpose: on a local disk they take
 * microseconds, far less than a hop through libuv's thread pool, and a synchronous step cannot
 * interleave with another operation of this process. Only `fsync`/`fdatasync`, which take
 * milliseconds, are asynchronous.
 */
export interface FsIo {
  /**
   * Opens a file with numeric `flags` ({@link OPEN_READ}, …). The real one adds `O_NOFOLLOW`
   * and `O_NONBLOCK` and refuses anything but a regular file (or, with `O_DIRECTORY`, a
   * directory): see {@link openContained}.
   */
  openSync(path: string, flags: number, mode?: number): number;
  /**
   * Opens an existing regular file with `flags` ({@link OPEN_READ} or {@link OPEN_READ_WRITE})
   * and returns its `fstat` too: the check that it is a regular file is the `fstat` the caller
   * needs anyway (a log's size).
   */
  openFileSync(path: string, flags: number): { fd: number; stat: Stats };
  closeSync(fd: number): void;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number | null): number;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  fstatSync(fd: number): Stats;
  statSync(path: string): Stats;
  lstatSync(path: string): Stats;
  /** `lstat` with nanosecond times (the listing compares directory modification times). */
  lstatBigIntSync(path: string): BigIntStats;
  ftruncateSync(fd: number, length: number): void;
  readFileSync(path: string): Buffer;
  renameSync(from: string, to: string): void;
  linkSync(existing: string, created: string): void;
  unlinkSync(path: string): void;
  mkdirSync(path: string, mode?: number): void;
  rmdirSync(path: string): void;
  readdirSync(path: string): Dirent[];
  fsync(fd: number): Promise<void>;
  /** `fsync` for the few writes made while a store is opened (synchronous, once per store). */
  fsyncSync(fd: number): void;
  fdatasync(fd: number): Promise<void>;
}

// O_NOFOLLOW, O_NONBLOCK and O_DIRECTORY are POSIX (the store supports Linux and macOS).
const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW = 0, O_NONBLOCK = 0, O_DIRECTORY = 0 } = fs.constants;
/** Open flags: read a file. */
export const OPEN_READ = O_RDONLY;
/** Open flags: read and write a file (a log being appended to). */
export const OPEN_READ_WRITE = O_RDWR;
/** Open flags: create a new file, failing when the name exists (staging files, lock and lease entries). */
export const OPEN_CREATE_EXCLUSIVE = O_WRONLY | O_CREAT | O_EXCL;
/** Open flags: a directory (to fsync it); anything else fails with `ENOTDIR`. */
export const OPEN_DIRECTORY = O_RDONLY | O_DIRECTORY;

const promisified =
  (call: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void) =>
  (fd: number): Promise<void> =>
    new Promise((resolve, reject) => call(fd, (error) => (error ? reject(error) : resolve())));

/** What an entry found where the store expects one of its files is, for a refusal's message. */
function describeEntry(path: string): string {
  try {
    const stat = fs.lstatSync(path);
    if (stat.isSymbolicLink()) return "a symbolic link";
    if (stat.isFIFO()) return "a FIFO";
    if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
    if (stat.isSocket()) return "a socket";
    if (stat.isDirectory()) return "a directory";
  } catch {
    // gone meanwhile: the generic words below
  }
  return "not a regular file";
}

/**
 * The `corrupt` refusal of an entry the store will not open: a symbolic link (never followed,
 * wherever it points), a FIFO, a device or a socket where the store expects its own file.
 */
export function notStoreFile(path: string, what = describeEntry(path)): KeelError {
  return new KeelError(
    "corrupt",
    `${path} is ${what}, not a file the store wrote; the store never follows or opens one (check() reports it, check({ repair: true }) moves it into quarantine)`,
    { details: { location: path, problem: what }, retryable: false },
  );
}

/**
 * The one place the store opens a path: with `O_NOFOLLOW` (a symbolic link as the last
 * component fails with `ELOOP` instead of being followed; the directories on the way are the
 * {@link PathGuard}'s part) and `O_NONBLOCK` (a FIFO or a device cannot block the open). An
 * open that may find an existing entry is then checked with `fstat` to be a regular file (a
 * directory with `O_DIRECTORY`, which the kernel checks itself); an exclusive create made a new
 * file and needs no check. Anything else is closed unread and refused ({@link notStoreFile}).
 */
export function openContained(path: string, flags: number, mode?: number): { fd: number; stat: Stats | undefined } {
  let fd: number;
  try {
    fd = fs.openSync(path, flags | O_NOFOLLOW | O_NONBLOCK, mode);
  } catch (error) {
    // ELOOP: a link; ENXIO: a FIFO without reader, or a device without driver.
    if (isErrno(error, "ELOOP", "ENXIO")) throw notStoreFile(path);
    if ((flags & O_DIRECTORY) !== 0 && isErrno(error, "ENOTDIR")) throw notStoreFile(path);
    throw error;
  }
  if ((flags & O_DIRECTORY) !== 0 || (flags & (O_CREAT | O_EXCL)) === (O_CREAT | O_EXCL)) return { fd, stat: undefined };
  let stat: Stats;
  try {
    stat = fs.fstatSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  if (!stat.isFile()) {
    fs.closeSync(fd);
    throw notStoreFile(path);
  }
  return { fd, stat };
}

/** Files up to this size are read into one reused buffer. */
const SMALL_FILE_BYTES = 64 * 1024;
let readBuffer: Buffer | undefined;

/**
 * Reads a whole file ({@link openContained}: never through a link, never a FIFO or device):
 * one `read` into a reused buffer for a file under 64 KiB, else `fs.readFileSync`. The store's
 * files are replaced by rename, never written in place, so a short read is the end of the file.
 */
function readWholeFile(path: string): Buffer {
  const { fd, stat } = openContained(path, O_RDONLY);
  try {
    if (stat!.size >= SMALL_FILE_BYTES) return fs.readFileSync(fd);
    readBuffer ??= Buffer.allocUnsafe(SMALL_FILE_BYTES);
    const count = fs.readSync(fd, readBuffer, 0, SMALL_FILE_BYTES, 0);
    // A copy: the buffer is reused by the next read.
    if (count < SMALL_FILE_BYTES) return Buffer.from(readBuffer.subarray(0, count));
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** The real file system. */
export const nodeFsIo: FsIo = {
  openSync: (path, flags, mode) => openContained(path, flags, mode).fd,
  openFileSync: (path, flags) => {
    const { fd, stat } = openContained(path, flags & ~(O_CREAT | O_EXCL | O_DIRECTORY));
    return { fd, stat: stat! };
  },
  closeSync: (fd) => fs.closeSync(fd),
  writeSync: (fd, buffer, offset, length, position) => fs.writeSync(fd, buffer, offset, length, position),
  readSync: (fd, buffer, offset, length, position) => fs.readSync(fd, buffer, offset, length, position),
  fstatSync: (fd) => fs.fstatSync(fd),
  statSync: (path) => fs.statSync(path),
  lstatSync: (path) => fs.lstatSync(path),
  lstatBigIntSync: (path) => fs.lstatSync(path, { bigint: true }),
  ftruncateSync: (fd, length) => fs.ftruncateSync(fd, length),
  readFileSync: readWholeFile,
  renameSync: (from, to) => fs.renameSync(from, to),
  linkSync: (existing, created) => fs.linkSync(existing, created),
  unlinkSync: (path) => fs.unlinkSync(path),
  mkdirSync: (path, mode) => {
    fs.mkdirSync(path, mode === undefined ? undefined : { mode });
  },
  rmdirSync: (path) => fs.rmdirSync(path),
  readdirSync: (path) => fs.readdirSync(path, { withFileTypes: true }),
  fsync: promisified(fs.fsync),
  fsyncSync: (fd) => fs.fsyncSync(fd),
  fdatasync: promisified(fs.fdatasync),
};

/** The errno code of a thrown value, if it has one. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** True when `error` carries one of `codes`. */
export function isErrno(error: unknown, ...codes: string[]): boolean {
  const code = errnoOf(error);
  return code !== undefined && codes.includes(code);
}

/** Errno codes of transient conditions: retrying later may succeed. */
const TRANSIENT = new Set(["EMFILE", "ENFILE", "EAGAIN", "EBUSY", "EINTR", "ETIMEDOUT", "ENOMEM"]);

/**
 * Turns anything thrown during an operation into a `KeelError`: a `KeelError` passes through;
 * transient errno codes become `unavailable` (retryable); every other failure is `io_failed`.
 */
export function toStoreError(error: unknown, operation: string): KeelError {
  if (KeelError.is(error)) return error;
  const code = errnoOf(error);
  const path = (error as NodeJS.ErrnoException | null)?.path;
  const details: Record<string, JsonValue> = { operation };
  if (code) details.errno = code;
  if (typeof path === "string") details.location = path;
  const text = error instanceof Error ? error.message : String(error);
  if (code && TRANSIENT.has(code)) {
    return new KeelError("unavailable", `${operation} failed for a transient reason (${text}); retry later`, {
      details,
      retryable: true,
      cause: error,
    });
  }
  return new KeelError("io_failed", `${operation} failed: ${text}; stored data is unchanged unless the message says otherwise`, {
    details,
    retryable: false,
    cause: error,
  });
}

/** Writes all of `buffer` at `position` (or the current offset), looping on short writes. */
export function writeAll(io: FsIo, fd: number, buffer: Uint8Array, position: number | null): void {
  let written = 0;
  while (written < buffer.length) {
    const count = io.writeSync(fd, buffer, written, buffer.length - written, position === null ? null : position + written);
    if (count <= 0) throw Object.assign(new Error("write made no progress"), { code: "EIO" });
    written += count;
  }
}

/** Reads exactly `length` bytes at `position` (fewer only at end of file). */
export function readAt(io: FsIo, fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const count = io.readSync(fd, buffer, filled, length - filled, position + filled);
    if (count === 0) break;
    filled += count;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

/** Opens a directory to fsync it, or `undefined` where directories cannot be opened (Windows). */
function openDirectory(io: FsIo, directory: string): number | undefined {
  try {
    return io.openSync(directory, OPEN_DIRECTORY);
  } catch (error) {
    if (process.platform === "win32" && isErrno(error, "EPERM", "EISDIR")) return undefined;
    throw error;
  }
}

/** Errors of an fsync the file system does not support for directories (best effort there). */
const UNSUPPORTED_FSYNC = ["EINVAL", "ENOTSUP", "EPERM", "EISDIR"];

/** Fsyncs a directory so that renames and creations in it survive a power loss (best effort where unsupported). */
export async function fsyncDirectory(io: FsIo, directory: string): Promise<void> {
  const fd = openDirectory(io, directory);
  if (fd === undefined) return;
  try {
    await io.fsync(fd);
  } catch (error) {
    if (!isErrno(error, ...UNSUPPORTED_FSYNC)) throw error;
  } finally {
    io.closeSync(fd);
  }
}

/** {@link fsyncDirectory}, synchronously (for the writes made while a store is opened). */
export function fsyncDirectorySync(io: FsIo, directory: string): void {
  const fd = openDirectory(io, directory);
  if (fd === undefined) return;
  try {
    io.fsyncSync(fd);
  } catch (error) {
    if (!isErrno(error, ...UNSUPPORTED_FSYNC)) throw error;
  } finally {
    io.closeSync(fd);
  }
}

/** Closes `fd`, ignoring errors (for cleanup paths that are already failing). */
export function closeQuietly(io: FsIo, fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    io.closeSync(fd);
  } catch {
    // already failing: the first error is the one to report
  }
}

/** Unlinks `path`, ignoring errors (cleanup). */
export function unlinkQuietly(io: FsIo, path: string | undefined): void {
  if (path === undefined) return;
  try {
    io.unlinkSync(path);
  } catch {
    // cleanup only
  }
}

/** The permission bits the store creates files and directories with. */
export interface FsModes {
  file: number;
  directory: number;
}

/**
 * An {@link FsIo} that creates every file (an open with `O_CREAT`) and directory with `modes`,
 * whatever mode its caller passed: one place decides who may read the store.
 */
export function withModes(io: FsIo, modes: FsModes): FsIo {
  return {
    ...io,
    openSync: (path, flags, mode) => {
      return io.openSync(path, flags, (flags & O_CREAT) !== 0 ? modes.file : mode);
    },
    mkdirSync: (path) => io.mkdirSync(path, modes.directory),
  };
}
