import type { Stats } from "node:fs";
import { KeelError } from "@keel/core";
import { closeQuietly, isErrno, OPEN_READ, OPEN_READ_WRITE, readAt, unlinkQuietly, type FsIo } from "./fs-io.js";
import { createLogScanner, parseLine, type KeepRecords, type LogHeader, type RecordLine, type ScanStart, type ScannedRecord } from "./log-format.js";
import { idHash, loadSidecar, probeIdTable, saveSidecar, sidecarEndOf } from "./log-sidecar.js";

/** What this process knows of one log file, valid while the file is the same and has not shrunk. */
export interface LogIndex {
  dev: number;
  ino: number;
  /** The header line's bytes: compared on each refresh, so a replaced file (even one reusing the inode) is noticed. */
  headerBytes: Buffer;
  header: LogHeader;
  lastSeq: number;
  committedEnd: number;
  /** A lower bound of the offset up to which the file is durable (see `LogScan.durableEnd`). */
  durableEnd: number;
  /** Whether the last committed batch was written without `fdatasync`. */
  lastUnsynced: boolean;
  /** The seq of the first record in `offsets`: `header.baseSeq + 1` for a complete index. */
  firstSeq: number;
  /** `offsets[i]` is the byte offset of the record with seq `firstSeq + i`. */
  offsets: number[];
  /**
   * The ids of the records from `firstSeq` on, after the `covered` ones when there are, in seq
   * order (`ids[i]` is the id of record `firstSeq + (covered?.count ?? 0) + i`), to dedupe
   * re-appends (the stored value is read back from the file to compare): see {@link findStoredValue}.
   */
  ids: string[];
  /** id → seq of `ids`, made at the first lookup (an index built by a read needs none) and kept up to date after. */
  seqOfId: Map<string, number> | undefined;
  /**
   * The ids of the first `count` records (from `firstSeq` on) as the log's id sidecar holds them:
   * a table of id hashes (see log-sidecar.ts) whose candidates are read back from the file.
   */
  covered: { table: Uint32Array; count: number } | undefined;
  /**
   * True when the index covers every record of the file (a scan from the start, or from the end
   * of a checked id sidecar: `covered`). An index built from the tail ({@link LogIndexCache.open}
   * with `afterSeq`) covers only the records from `firstSeq` on: enough for a head or a read of
   * the newest records, not for an append's dedupe.
   */
  complete: boolean;
  /** The offset the log's id sidecar (see log-sidecar.ts) covers up to, as this index last loaded or wrote it; 0 for none. */
  sidecarEnd: number;
}

/** An open log file with its refreshed index. */
export interface LogView {
  /** The open file (the caller closes it), or `undefined` when there is no file. */
  fd: number | undefined;
  /** `undefined` when there is no file or no complete header in it. */
  index: LogIndex | undefined;
  /** Bytes after the last complete batch (a torn or in-flight write, or unsynced batches a power loss damaged: `lost`). */
  tail: { offset: number; bytes: number; lost?: { offset: number; problem: string } } | undefined;
  /**
   * The records asked for with `keep` that this open's scan read (the ones it indexed just now:
   * the newest of those asked for, in seq order), parsed once; the ones indexed before are the
   * caller's to read. Empty without `keep`.
   */
  kept: RecordLine[];
}

/** Options of {@link LogIndexCache.open}. */
export interface LogOpenOptions {
  /**
   * The caller needs only the head and the records after this seq: a log this instance has not
   * indexed yet is read from its tail back to a batch boundary at or before it (never the last
   * batch's own end: the last batch is verified line by line, as a scan from the start would),
   * and only from there forward. Without it, the index is complete: a log this instance has not
   * indexed yet is then read from the end of the part its id sidecar covers (when one is there
   * and passes every check), else from the start.
   */
  afterSeq?: number;
  /** A log not indexed yet is always scanned from the start (check). */
  whole?: boolean;
  /** The records the caller reads: those the scan meets are kept parsed (`LogView.kept`). */
  keep?: KeepRecords;
}

/** Per-store cache of log indexes. */
export interface LogIndexCache {
  /**
   * Opens a log file and brings its index up to date: scans only the bytes added since the last
   * look (another process may have appended), or the whole file when it was replaced or shrank
   * (see {@link LogOpenOptions} for where a log not indexed yet is read from). Damage is thrown
   * as `corrupt` with the byte offset. Synchronous, so that nothing of this process interleaves
   * with it.
   */
  open(file: string, flags: "r" | "r+", options?: LogOpenOptions): LogView;
  /**
   * Records a batch this process appended at `writeOffset` (ignored if a refresh already saw it),
   * synced (`fdatasync`) or not.
   */
  extend(file: string, index: LogIndex, writeOffset: number, records: ScannedRecord[], lastSeq: number, end: number, synced: boolean): void;
  /** Records that the file (device `dev`, inode `ino`) is durable up to `end` (a background sync). */
  markDurable(file: string, dev: number, ino: number, end: number): void;
  /**
   * Drops the index of a file that was replaced, and its id sidecar; with `keepSidecar`, only
   * this instance's index (a read that must rescan the file and write nothing).
   */
  forget(file: string, keepSidecar?: boolean): void;
}

/** Options of {@link createLogIndexCache}. */
export interface LogIndexCacheOptions {
  /**
   * A read (an open with flags `"r"`) never saves an id sidecar: what a store opened with
   * `create: false` promises (its reads write nothing). Writes (`"r+"`, `extend`, `markDurable`)
   * still keep the sidecars.
   */
  quietReads?: boolean;
}

const CHUNK_BYTES = 1024 * 1024;
/** Indexes kept per store instance; the least recently used beyond this are dropped (and rebuilt on demand). */
const MAX_CACHED_LOGS = 256;
const HEADER_PROBE_BYTES = 4096;
/** A log smaller than this is scanned whole (a tail probe would save nothing). */
const TAIL_PROBE_MIN_BYTES = 256 * 1024;
/** Chunks read backwards by a tail probe. */
const TAIL_CHUNK_BYTES = 64 * 1024;

/** The `corrupt` error of damage in a log file. */
export function logCorrupt(file: string, offset: number, problem: string): KeelError {
  return new KeelError("corrupt", `log file ${file} is damaged at byte ${offset}: ${problem}; nothing after it is read (check() reports it)`, {
    details: { location: file, offset, problem },
    retryable: false,
  });
}

/**
 * The value text of the committed record of `id`, if the log holds one (see {@link readStoredValue}):
 * looked up in the ids this index scanned, then among the candidates of the sidecar's id table,
 * each read back from the file (a candidate whose line holds another id is a hash collision).
 */
export function findStoredValue(io: FsIo, fd: number, file: string, index: LogIndex, id: string): string | undefined {
  const seq = seqOfId(index).get(id);
  if (seq !== undefined) return readStoredValue(io, fd, file, index, seq, id);
  if (!index.covered) return undefined;
  let text: string | undefined;
  probeIdTable(index.covered.table, idHash(id), (position) => {
    text = readStoredValue(io, fd, file, index, index.firstSeq + position, id, true);
    return text !== undefined;
  });
  return text;
}

/** The id → seq map of an index's `ids`, made on first use. */
function seqOfId(index: LogIndex): Map<string, number> {
  if (index.seqOfId) return index.seqOfId;
  const seqs = new Map<string, number>();
  const first = index.firstSeq + (index.covered?.count ?? 0);
  index.ids.forEach((id, position) => seqs.set(id, first + position));
  index.seqOfId = seqs;
  return seqs;
}

/** Adds records just scanned or appended (the next in seq order) to an index. */
function addRecords(index: LogIndex, records: ScannedRecord[]): void {
  const { offsets, ids, seqOfId: seqs } = index;
  for (const record of records) {
    offsets.push(record.offset);
    ids.push(record.id);
    seqs?.set(record.id, record.seq);
  }
}

/**
 * Reads back the value text (JSON, as written) of committed record `seq`, verified by its CRC, to
 * compare it with a re-appended value. A line that fails its check or is not the record the
 * index says is `corrupt`; with `candidate`, a good line of record `seq` with another id is
 * `undefined` instead (a hash collision of the sidecar's id table).
 */
export function readStoredValue(io: FsIo, fd: number, file: string, index: LogIndex, seq: number, id: string, candidate = false): string | undefined {
  const position = seq - index.firstSeq;
  const from = index.offsets[position];
  if (from === undefined) throw logCorrupt(file, index.committedEnd, `record ${seq} is missing from the log`);
  const to = position + 1 < index.offsets.length ? index.offsets[position + 1]! : index.committedEnd;
  const parsed = parseLine(readAt(io, fd, from, to - from - 1));
  if (candidate && parsed.kind === "record" && parsed.record.seq === seq && parsed.record.id !== id) return undefined;
  if (parsed.kind !== "record" || parsed.record.seq !== seq || parsed.record.id !== id) {
    throw logCorrupt(file, from, parsed.kind === "bad" ? parsed.problem : `expected record ${seq} of id ${JSON.stringify(id)} here`);
  }
  const bytes = parsed.valueBytes;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8");
}

/**
 * Finds where a forward scan may start to index the records after `afterSeq`: just after a
 * committed batch's end line at or before `afterSeq` that is not the file's last one, found by
 * reading the file backwards from its end. The line must also lie before the file's durable
 * point (a synced batch's end line, or one at or before a `durableTo` named by a line after it):
 * a power loss may have damaged any byte after that point, which only a forward scan from
 * before it can judge. `undefined` when none is found within half the file
 * (the caller scans from the start). The lines walked backwards are only parsed to find end
 * lines; the forward scan from the boundary verifies everything after it under the usual rules,
 * so a torn tail or a damaged last batch is judged exactly as by a scan from the start.
 */
function findTailStart(io: FsIo, fd: number, size: number, header: LogHeader, headerEnd: number, afterSeq: number): ScanStart | undefined {
  const floor = Math.max(headerEnd, size >> 1);
  let base = size;
  let data: Buffer = Buffer.alloc(0);
  // The absolute offset of the newline that ends the line being looked at (none yet: the bytes after the last newline are a tail).
  let lineEnd: number | undefined;
  let endLines = 0;
  // The lowest seq seen so far and how many lines were walked: when the records still to walk
  // back over (at the bytes per line seen so far) reach below the floor, the walk gives up early.
  let lowestSeq = Number.MAX_SAFE_INTEGER;
  let lines = 0;
  // The largest durable point named by the (valid) unsynced end lines walked so far.
  let claimed = 0;
  while (base > floor) {
    if (lines > 0 && lowestSeq - afterSeq > 0 && (lowestSeq - afterSeq) * ((size - base) / lines) > base - floor) return undefined;
    const from = Math.max(floor, base - TAIL_CHUNK_BYTES);
    data = Buffer.concat([readAt(io, fd, from, base - from), data]);
    base = from;
    for (;;) {
      const searchFrom = (lineEnd ?? base + data.length) - base - 1;
      if (searchFrom < 0) break;
      const newline = data.lastIndexOf(NEWLINE, searchFrom);
      if (newline < 0) break;
      if (lineEnd !== undefined) {
        const parsed = parseLine(data.subarray(newline + 1, lineEnd - base));
        lines += 1;
        if (parsed.kind === "record") {
          lowestSeq = Math.min(lowestSeq, parsed.record.seq);
          const durable = parsed.durableTo === undefined || lineEnd + 1 <= claimed;
          if (parsed.end && ++endLines >= 2 && parsed.record.seq <= afterSeq && durable) {
            return { offset: lineEnd + 1, header, lastSeq: parsed.record.seq, durableEnd: lineEnd + 1, lastUnsynced: parsed.durableTo !== undefined };
          }
          if (parsed.durableTo !== undefined) claimed = Math.max(claimed, parsed.durableTo);
        }
      }
      lineEnd = base + newline;
      // Keep only the bytes up to the current line end.
      data = data.subarray(0, newline + 1);
    }
  }
  return undefined;
}

const NEWLINE = 0x0a;

/**
 * Creates an empty {@link LogIndexCache}. With `sidecarOf` (the path of a log file's id
 * sidecar, or `undefined` when the sidecars' directory must not be used: a link there)
 * sidecar), complete indexes of big logs are saved beside them and loaded by new instances.
 */
export function createLogIndexCache(io: FsIo, sidecarOf?: (file: string) => string | undefined, options: LogIndexCacheOptions = {}): LogIndexCache {
  const cache = new Map<string, LogIndex>();

  const scan = (file: string, fd: number, size: number, start: ScanStart, keep: KeepRecords | undefined) => {
    const scanner = createLogScanner(start, keep);
    let position = start.offset;
    // The header line, when the scan reads it (from the start of the file).
    let headerBytes: Buffer | undefined;
    while (position < size) {
      const chunk = readAt(io, fd, position, Math.min(CHUNK_BYTES, size - position));
      if (chunk.length === 0) break;
      if (position === 0 && chunk.indexOf(NEWLINE) >= 0) headerBytes = Buffer.from(chunk.subarray(0, chunk.indexOf(NEWLINE) + 1));
      const problem = scanner.feed(chunk);
      if (problem) throw logCorrupt(file, problem.offset, problem.problem);
      position += chunk.length;
      // A line the chunk's end cut is read again, whole, with the next chunk.
      if (position < size) position -= scanner.rewind();
    }
    const found = scanner.finish();
    if ("problem" in found) throw logCorrupt(file, found.offset, found.problem);
    return { ...found, headerBytes };
  };

  /** Where to scan a log this instance has no index of: from its tail when `afterSeq` allows, else from the start. */
  const coldStart = (fd: number, size: number, afterSeq: number | undefined): { start: ScanStart; headerBytes?: Buffer } => {
    const fromStart = { start: { offset: 0, header: undefined, lastSeq: 0 } };
    // (A read from seq 0 on needs the whole file: every header's `baseSeq` is at least 0.)
    if (afterSeq === undefined || afterSeq === 0 || size < TAIL_PROBE_MIN_BYTES) return fromStart;
    const probe = readAt(io, fd, 0, Math.min(HEADER_PROBE_BYTES, size));
    const newline = probe.indexOf(NEWLINE);
    if (newline < 0) return fromStart;
    const parsed = parseLine(probe.subarray(0, newline));
    // A deleted log has no records; a read from its first record on needs the whole file anyway.
    if (parsed.kind !== "header" || parsed.header.deleted || afterSeq <= parsed.header.baseSeq) return fromStart;
    const start = findTailStart(io, fd, size, parsed.header, newline + 1, afterSeq);
    return start ? { start, headerBytes: Buffer.from(probe.subarray(0, newline + 1)) } : fromStart;
  };

  const refresh = (file: string, fd: number, stat: Stats, flags: "r" | "r+", openOptions: LogOpenOptions): Omit<LogView, "fd"> => {
    const { afterSeq, whole = false, keep } = openOptions;
    const cached = cache.get(file);
    let base: LogIndex | undefined;
    if (cached && cached.ino === stat.ino && cached.dev === stat.dev && stat.size >= cached.committedEnd) {
      const probe = readAt(io, fd, 0, cached.headerBytes.length);
      // A partial index serves only callers that need no record before it.
      const covers = cached.complete || (afterSeq !== undefined && afterSeq + 1 >= cached.firstSeq);
      if (covers && probe.equals(cached.headerBytes)) base = cached;
    }
    if (!base) cache.delete(file);
    const sidecar = !sidecarOf || base || afterSeq !== undefined || whole ? undefined : loadSidecar(io, () => sidecarOf(file), fd, stat.size);
    const cold = base || sidecar ? undefined : coldStart(fd, stat.size, afterSeq);
    const start: ScanStart = base
      ? { offset: base.committedEnd, header: base.header, lastSeq: base.lastSeq, durableEnd: base.durableEnd, lastUnsynced: base.lastUnsynced }
      : (sidecar?.start ?? cold!.start);
    if (stat.size === start.offset && !sidecar) {
      if (base) {
        cache.delete(file);
        cache.set(file, base);
      }
      return { index: base, tail: undefined, kept: [] };
    }
    const found = scan(file, fd, stat.size, start, keep);
    if (!found.header) return { index: undefined, tail: found.tail, kept: [] };
    let index = base;
    if (!index) {
      let headerBytes = sidecar?.headerBytes ?? cold?.headerBytes ?? found.headerBytes;
      if (!headerBytes) {
        const probe = readAt(io, fd, 0, Math.min(HEADER_PROBE_BYTES, stat.size));
        headerBytes = Buffer.from(probe.subarray(0, probe.indexOf(NEWLINE) + 1));
      }
      const partial = start.offset > 0 && !sidecar;
      index = {
        dev: stat.dev,
        ino: stat.ino,
        headerBytes,
        header: found.header,
        lastSeq: found.header.baseSeq,
        committedEnd: 0,
        durableEnd: 0,
        lastUnsynced: false,
        firstSeq: (partial ? start.lastSeq : found.header.baseSeq) + 1,
        offsets: sidecar?.offsets ?? [],
        ids: [],
        seqOfId: undefined,
        covered: sidecar?.covered,
        complete: !partial,
        // A read loads no sidecar (it parses every line anyway): what one there covers, to not write it again.
        sidecarEnd: sidecar?.end ?? (sidecarOf && !partial && !whole && afterSeq !== undefined ? sidecarEndOf(io, () => sidecarOf(file), headerBytes) : 0),
      };
      cache.set(file, index);
      if (cache.size > MAX_CACHED_LOGS) cache.delete(cache.keys().next().value!);
    } else {
      // Most recently used last.
      cache.delete(file);
      cache.set(file, index);
    }
    addRecords(index, found.records);
    index.lastSeq = found.lastSeq;
    index.committedEnd = found.committedEnd;
    index.durableEnd = Math.max(index.durableEnd, found.durableEnd);
    index.lastUnsynced = found.lastUnsynced;
    if (sidecarOf && (flags === "r+" || !options.quietReads)) saveSidecar(io, () => sidecarOf(file), index, fd);
    return { index, tail: found.tail, kept: found.kept };
  };

  return {
    open(file, flags, openOptions = {}) {
      let fd: number;
      let stat: Stats;
      try {
        ({ fd, stat } = io.openFileSync(file, flags === "r" ? OPEN_READ : OPEN_READ_WRITE));
      } catch (error) {
        if (isErrno(error, "ENOENT")) {
          cache.delete(file);
          return { fd: undefined, index: undefined, tail: undefined, kept: [] };
        }
        throw error;
      }
      try {
        return { fd, ...refresh(file, fd, stat, flags, openOptions) };
      } catch (error) {
        closeQuietly(io, fd);
        throw error;
      }
    },
    extend(file, index, writeOffset, records, lastSeq, end, synced) {
      if (cache.get(file) !== index || index.committedEnd !== writeOffset) return;
      addRecords(index, records);
      index.lastSeq = lastSeq;
      index.committedEnd = end;
      index.lastUnsynced = !synced;
      if (synced) {
        index.durableEnd = end;
        if (sidecarOf) saveSidecar(io, () => sidecarOf(file), index, undefined);
      }
    },
    markDurable(file, dev, ino, end) {
      const index = cache.get(file);
      if (!index || index.dev !== dev || index.ino !== ino) return;
      index.durableEnd = Math.max(index.durableEnd, Math.min(end, index.committedEnd));
      if (sidecarOf) saveSidecar(io, () => sidecarOf(file), index, undefined);
    },
    forget(file, keepSidecar = false) {
      cache.delete(file);
      if (sidecarOf && !keepSidecar) unlinkQuietly(io, sidecarOf(file));
    },
  };
}
