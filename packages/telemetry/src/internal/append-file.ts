import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { toKeelError, type KeelError } from "@keel/core";
import { ok, Result } from "neverthrow";

interface OpenFile {
  fd: number;
  /** The file was created by this sink: its directory entry needs an fsync too. */
  created: boolean;
  repairedBytes: number;
}

const NEWLINE = 0x0a;
const TAIL_CHUNK = 64 * 1024;

/** Cuts a torn tail (bytes after the last newline) off an open file; returns how many. */
function cutTornTail(fd: number): number {
  const size = fstatSync(fd).size;
  let end = size;
  const chunk = Buffer.alloc(TAIL_CHUNK);
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK);
    const length = end - start;
    readSync(fd, chunk, 0, length, start);
    const at = chunk.subarray(0, length).lastIndexOf(NEWLINE);
    if (at >= 0) {
      const keep = start + at + 1;
      if (keep < size) ftruncateSync(fd, keep);
      return size - keep;
    }
    end = start;
  }
  if (size > 0) ftruncateSync(fd, 0);
  return size;
}

const openSafely = Result.fromThrowable(
  (file: string): OpenFile => {
    let created = false;
    let fd: number;
    try {
      fd = openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_APPEND | constants.O_RDWR, 0o644);
      created = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      fd = openSync(file, "a+");
    }
    try {
      return { fd, created, repairedBytes: created ? 0 : cutTornTail(fd) };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  },
  (error) => toKeelError(error, "io_failed", "opening the events file"),
);

const writeLine = Result.fromThrowable(
  (fd: number, line: Buffer) => {
    // O_APPEND: one write per line, so concurrent writers never interleave within a line.
    let written = writeSync(fd, line);
    while (written < line.length) written += writeSync(fd, line, written);
  },
  (error) => toKeelError(error, "io_failed", "writing an event line"),
);

const syncFile = Result.fromThrowable(
  (fd: number, directory: string | undefined) => {
    fsyncSync(fd);
    if (directory === undefined) return;
    const directoryFd = openSync(directory, "r");
    try {
      fsyncSync(directoryFd);
    } finally {
      closeSync(directoryFd);
    }
  },
  (error) => toKeelError(error, "io_failed", "syncing the events file"),
);

/** A file opened lazily for appending lines, with torn-tail repair and fsync. */
export interface AppendFile {
  /** Opens the file if needed and appends `line` with one write. */
  append(line: Buffer): Result<void, KeelError>;
  /** fsyncs the file (and, once, the directory of a file this created); a no-op before the first append. */
  sync(): Result<void, KeelError>;
  /** Closes the file; a later `append` opens it again. */
  close(): Result<void, KeelError>;
  /** Bytes of torn tails cut off so far. */
  readonly repairedBytes: number;
}

/** Creates an {@link AppendFile} for an absolute path. Nothing is opened until the first append. */
export function createAppendFile(file: string): AppendFile {
  let open: OpenFile | undefined;
  let repairedBytes = 0;
  let directorySynced = false;
  const ensureOpen = (): Result<OpenFile, KeelError> => {
    if (open) return ok(open);
    return openSafely(file).map((opened) => {
      repairedBytes += opened.repairedBytes;
      return (open = opened);
    });
  };
  return {
    append: (line) => ensureOpen().andThen((opened) => writeLine(opened.fd, line)),
    sync() {
      if (!open) return ok(undefined);
      return syncFile(open.fd, open.created && !directorySynced ? dirname(file) : undefined).map(() => {
        directorySynced = true;
      });
    },
    close() {
      if (!open) return ok(undefined);
      const fd = open.fd;
      open = undefined;
      return Result.fromThrowable(
        () => closeSync(fd),
        (error) => toKeelError(error, "io_failed", "closing the events file"),
      )();
    },
    get repairedBytes() {
      return repairedBytes;
    },
  };
}
