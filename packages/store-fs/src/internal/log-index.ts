import { KeelError } from "@keel/core";
import { closeQuietly, isErrno, readAt, type FsIo } from "./fs-io.js";
import { createLogScanner, parseLine, type LogHeader, type ScanStart, type ScannedRecord } from "./log-format.js";

/** What this process knows of one log file, valid while the file is the same and has not shrunk. */
export interface LogIndex {
  dev: number;
  ino: number;
  /** The header line's bytes: compared on each refresh, so a replaced file (even one reusing the inode) is noticed. */
  headerBytes: Buffer;
  header: LogHeader;
  lastSeq: number;
  committedEnd: number;
  /** `offsets[i]` is the byte offset of the record with seq `header.baseSeq + 1 + i`. */
  offsets: number[];
  /** id → seq, to dedupe re-appends (the stored value is read back from the file to compare). */
  ids: Map<string, number>;
}

/** An open log file with its refreshed index. */
export interface LogView {
  /** The open file (the caller closes it), or `undefined` when there is no file. */
  fd: number | undefined;
  /** `undefined` when there is no file or no complete header in it. */
  index: LogIndex | undefined;
  /** Bytes after the last complete batch (a torn or in-flight write). */
  tail: { offset: number; bytes: number } | undefined;
}

/** Per-store cache of log indexes. */
export interface LogIndexCache {
  /**
   * Opens a log file and brings its index up to date: scans only the bytes added since the last
   * look (another process may have appended), or the whole file when it was replaced or shrank.
   * Damage is thrown as `corrupt` with the byte offset. Synchronous, so that nothing of this
   * process interleaves with it.
   */
  open(file: string, flags: "r" | "r+"): LogView;
  /** Records a batch this process appended at `writeOffset` (ignored if a refresh already saw it). */
  extend(file: string, index: LogIndex, writeOffset: number, records: ScannedRecord[], lastSeq: number, end: number): void;
  /** Drops the index of a file that was replaced. */
  forget(file: string): void;
}

const CHUNK_BYTES = 4 * 1024 * 1024;
/** Indexes kept per store instance; the least recently used beyond this are dropped (and rebuilt on demand). */
const MAX_CACHED_LOGS = 256;
const HEADER_PROBE_BYTES = 4096;

/** The `corrupt` error of damage in a log file. */
export function logCorrupt(file: string, offset: number, problem: string): KeelError {
  return new KeelError("corrupt", `log file ${file} is damaged at byte ${offset}: ${problem}; nothing after it is read (check() reports it)`, {
    details: { location: file, offset, problem },
    retryable: false,
  });
}

/**
 * Reads back the value text (canonical JSON) of committed record `seq`, verified by its CRC, to
 * compare it with a re-appended value. A line that fails its check or is not the record the
 * index says is `corrupt`.
 */
export function readStoredValue(io: FsIo, fd: number, file: string, index: LogIndex, seq: number, id: string): string {
  const position = seq - index.header.baseSeq - 1;
  const from = index.offsets[position];
  if (from === undefined) throw logCorrupt(file, index.committedEnd, `record ${seq} is missing from the log`);
  const to = position + 1 < index.offsets.length ? index.offsets[position + 1]! : index.committedEnd;
  const parsed = parseLine(readAt(io, fd, from, to - from - 1));
  if (parsed.kind !== "record" || parsed.record.seq !== seq || parsed.record.id !== id) {
    throw logCorrupt(file, from, parsed.kind === "bad" ? parsed.problem : `expected record ${seq} of id ${JSON.stringify(id)} here`);
  }
  const bytes = parsed.valueBytes;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8");
}

/** Creates an empty {@link LogIndexCache}. */
export function createLogIndexCache(io: FsIo): LogIndexCache {
  const cache = new Map<string, LogIndex>();

  const scan = (file: string, fd: number, size: number, start: ScanStart) => {
    const scanner = createLogScanner(start);
    let position = start.offset;
    while (position < size) {
      const chunk = readAt(io, fd, position, Math.min(CHUNK_BYTES, size - position));
      if (chunk.length === 0) break;
      const problem = scanner.feed(chunk);
      if (problem) throw logCorrupt(file, problem.offset, problem.problem);
      position += chunk.length;
    }
    return scanner.finish();
  };

  const refresh = (file: string, fd: number): Pick<LogView, "index" | "tail"> => {
    const stat = io.fstatSync(fd);
    const cached = cache.get(file);
    let base: LogIndex | undefined;
    if (cached && cached.ino === stat.ino && cached.dev === stat.dev && stat.size >= cached.committedEnd) {
      const probe = readAt(io, fd, 0, cached.headerBytes.length);
      if (probe.equals(cached.headerBytes)) base = cached;
    }
    if (!base) cache.delete(file);
    const start: ScanStart = base ? { offset: base.committedEnd, header: base.header, lastSeq: base.lastSeq } : { offset: 0, header: undefined, lastSeq: 0 };
    if (stat.size === start.offset) {
      if (base) {
        cache.delete(file);
        cache.set(file, base);
      }
      return { index: base, tail: undefined };
    }
    const found = scan(file, fd, stat.size, start);
    if (!found.header) return { index: undefined, tail: found.tail };
    let index = base;
    if (!index) {
      const probe = readAt(io, fd, 0, Math.min(HEADER_PROBE_BYTES, stat.size));
      const newline = probe.indexOf(0x0a);
      index = {
        dev: stat.dev,
        ino: stat.ino,
        headerBytes: Buffer.from(probe.subarray(0, newline + 1)),
        header: found.header,
        lastSeq: found.header.baseSeq,
        committedEnd: 0,
        offsets: [],
        ids: new Map(),
      };
      cache.set(file, index);
      if (cache.size > MAX_CACHED_LOGS) cache.delete(cache.keys().next().value!);
    } else {
      // Most recently used last.
      cache.delete(file);
      cache.set(file, index);
    }
    for (const record of found.records) {
      index.offsets.push(record.offset);
      index.ids.set(record.id, record.seq);
    }
    index.lastSeq = found.lastSeq;
    index.committedEnd = found.committedEnd;
    return { index, tail: found.tail };
  };

  return {
    open(file, flags) {
      let fd: number;
      try {
        fd = io.openSync(file, flags);
      } catch (error) {
        if (isErrno(error, "ENOENT")) {
          cache.delete(file);
          return { fd: undefined, index: undefined, tail: undefined };
        }
        throw error;
      }
      try {
        return { fd, ...refresh(file, fd) };
      } catch (error) {
        closeQuietly(io, fd);
        throw error;
      }
    },
    extend(file, index, writeOffset, records, lastSeq, end) {
      if (cache.get(file) !== index || index.committedEnd !== writeOffset) return;
      for (const record of records) {
        index.offsets.push(record.offset);
        index.ids.set(record.id, record.seq);
      }
      index.lastSeq = lastSeq;
      index.committedEnd = end;
    },
    forget(file) {
      cache.delete(file);
    },
  };
}
