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
  openSync(path: string, flags: string | number, mode?: number): number;
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
  fdatasync(fd: number): Promise<void>;
}

const promisified =
  (call: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void) =>
  (fd: number): Promise<void> =>
    new Promise((resolve, reject) => call(fd, (error) => (error ? reject(error) : resolve())));

/** One read of this size takes a whole small file (documents, markers) without asking its size first. */
const SMALL_FILE_BYTES = 64 * 1024;
let readBuffer: Buffer | undefined;

/**
 * Reads a whole file: one `read` into a reused buffer for a file under 64 KiB (open, read,
 * close: no `fstat` for its size), else `fs.readFileSync`. The store's files are replaced by
 * rename, never written in place, so a short read is the end of the file.
 */
function readWholeFile(path: string): Buffer {
  const fd = fs.openSync(path, "r");
  try {
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
  openSync: (path, flags, mode) => fs.openSync(path, flags, mode),
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

/** Fsyncs a directory so that renames and creations in it survive a power loss (best effort where unsupported). */
export async function fsyncDirectory(io: FsIo, directory: string): Promise<void> {
  let fd: number;
  try {
    fd = io.openSync(directory, "r");
  } catch (error) {
    if (process.platform === "win32" && isErrno(error, "EPERM", "EISDIR")) return;
    throw error;
  }
  try {
    await io.fsync(fd);
  } catch (error) {
    if (!isErrno(error, "EINVAL", "ENOTSUP", "EPERM", "EISDIR")) throw error;
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
      const creates = typeof flags === "number" ? (flags & fs.constants.O_CREAT) !== 0 : /[wa]/.test(flags);
      return io.openSync(path, flags, creates ? modes.file : mode);
    },
    mkdirSync: (path) => io.mkdirSync(path, modes.directory),
  };
}
