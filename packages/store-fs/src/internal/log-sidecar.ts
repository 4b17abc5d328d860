import { createHash } from "node:crypto";
import { endianness } from "node:os";
import path from "node:path";
import { crc32 } from "node:zlib";
import { closeQuietly, isErrno, OPEN_READ, readAt, type FsIo } from "./fs-io.js";
import { writeFileAtomicSync } from "./fs-durable-write.js";
import { parseLine, type ScanStart } from "./log-format.js";
import type { LogIndex } from "./log-index.js";

/**
 * The id sidecar of a log file (under `_keel/logidx/`): a cache, never a source of truth, so
 * that a new store instance's first append to a big log need not scan the whole file to learn
 * every id (the store dedupes re-appended ids).
 *
 * It covers the log from its start up to `end`, the end of a committed batch at or before the
 * file's durable point (bytes before it are never changed again while the file keeps its header:
 * a power loss damages only bytes after the durable point, and a torn tail is cut only after the
 * committed end). It holds the SHA-256 of the log's header line (a replaced or deleted-and-reborn
 * log, with its new unique file id, never matches), the seq and the "written without fdatasync"
 * flag of the batch ending at `end`, each record's line length in seq order, and an
 * open-addressing table of (32-bit hash of the id, position) pairs: a lookup yields candidate
 * positions whose lines are read back and compared (the id and, for a re-append, the value), so
 * a hash collision never dedupes wrongly, and the table is used without parsing any id.
 *
 * Layout: a JSON line (the meta, padded with spaces to a multiple of 4 bytes), the lengths
 * (uint32 each), the table (two uint32 per slot: hash, position + 1, 0 for an empty slot), all
 * in this machine's byte order (named in the meta), then the CRC-32 (8 hex digits) of everything
 * before it. Written atomically (staging file and rename) without fsync: whatever a crash leaves
 * fails its checks on load and is ignored (the log is then scanned whole, as without a sidecar).
 */
export const SIDECAR_FORMAT = "keel.logidx.v1";

/** What a sidecar says about its log. */
export interface SidecarContent {
  /** SHA-256 (hex) of the log's header line, newline included. */
  headerHash: string;
  /** The byte offset it covers up to: the end of a committed, durable batch. */
  end: number;
  /** The seq of the last record before `end`. */
  lastSeq: number;
  /** Whether the batch ending at `end` was written without `fdatasync`. */
  lastUnsynced: boolean;
  /** The byte length (newline included) of each record's line, in seq order (position 0 is the header's `baseSeq + 1`). */
  lengths: Uint32Array;
  /** The id table (see {@link buildIdTable}). */
  table: Uint32Array;
}

/** The SHA-256 (hex) of a log's header line. */
export function headerHash(headerBytes: Uint8Array): string {
  return createHash("sha256").update(headerBytes).digest("hex");
}

/** A 32-bit FNV-1a hash of an id's UTF-16 code units. */
export function idHash(id: string): number {
  let hash = 0x811c9dc5;
  for (let position = 0; position < id.length; position++) hash = Math.imul(hash ^ id.charCodeAt(position), 0x01000193);
  return hash >>> 0;
}

/**
 * Builds an open-addressing table (linear probing, a power-of-two number of slots, at least
 * twice the entries) of `count` entries: `entries` calls `add(hash, position)` once per position.
 */
export function buildIdTable(count: number, entries: (add: (hash: number, position: number) => void) => void): Uint32Array {
  let slots = 2;
  while (slots < count * 2) slots *= 2;
  const table = new Uint32Array(slots * 2);
  const mask = slots - 1;
  entries((hash, position) => {
    let slot = hash & mask;
    while (table[slot * 2 + 1] !== 0) slot = (slot + 1) & mask;
    table[slot * 2] = hash;
    table[slot * 2 + 1] = position + 1;
  });
  return table;
}

/** Calls `visit(position)` for each position whose id has `hash`, until it returns true. */
export function probeIdTable(table: Uint32Array, hash: number, visit: (position: number) => boolean): void {
  const mask = table.length / 2 - 1;
  for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
    const position = table[slot * 2 + 1]!;
    if (position === 0) return;
    if (table[slot * 2] === hash && visit(position - 1)) return;
  }
}

/** Calls `visit(hash, position)` for every entry of a table. */
export function eachIdEntry(table: Uint32Array, visit: (hash: number, position: number) => void): void {
  for (let slot = 0; slot < table.length; slot += 2) if (table[slot + 1] !== 0) visit(table[slot]!, table[slot + 1]! - 1);
}

const ENDIAN = endianness();

/** Encodes a sidecar. */
export function encodeSidecar(content: SidecarContent): Buffer {
  const slots = content.table.length / 2;
  let meta = JSON.stringify({
    format: SIDECAR_FORMAT,
    endian: ENDIAN,
    header: content.headerHash,
    end: content.end,
    lastSeq: content.lastSeq,
    lastUnsynced: content.lastUnsynced,
    count: content.lengths.length,
    slots,
  });
  meta += " ".repeat((4 - ((meta.length + 1) % 4)) % 4);
  const body = Buffer.concat([
    Buffer.from(`${meta}\n`, "latin1"),
    Buffer.from(content.lengths.buffer, content.lengths.byteOffset, content.lengths.byteLength),
    Buffer.from(content.table.buffer, content.table.byteOffset, content.table.byteLength),
  ]);
  return Buffer.concat([body, Buffer.from(crc32(body).toString(16).padStart(8, "0"), "latin1")]);
}

/**
 * Decodes and checks a sidecar: its CRC, its format and byte order, and that its parts agree
 * with each other (every length positive, every position in the table exactly once, an empty
 * slot left). `undefined` for anything else.
 */
export function decodeSidecar(bytes: Buffer): SidecarContent | undefined {
  if (bytes.length < 9) return undefined;
  const split = bytes.length - 8;
  const stored = bytes.subarray(split).toString("latin1");
  if (!/^[0-9a-f]{8}$/.test(stored) || crc32(bytes.subarray(0, split)) !== Number.parseInt(stored, 16)) return undefined;
  const newline = bytes.indexOf(0x0a);
  if (newline < 0 || newline >= split || (newline + 1) % 4 !== 0) return undefined;
  let meta: Record<string, unknown>;
  try {
    meta = JSON.parse(bytes.subarray(0, newline).toString("latin1")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof meta !== "object" || meta === null) return undefined;
  const { format, endian, header, end, lastSeq, lastUnsynced, count, slots } = meta;
  if (format !== SIDECAR_FORMAT || endian !== ENDIAN || typeof header !== "string" || typeof lastUnsynced !== "boolean") return undefined;
  if (!isCount(end) || !isCount(lastSeq) || !isCount(count) || !isCount(slots) || count === 0) return undefined;
  if (slots < count * 2 || (slots & (slots - 1)) !== 0 || slots > 2 ** 30) return undefined;
  if (split - (newline + 1) !== count * 4 + slots * 8) return undefined;
  // A copy, aligned for the typed arrays.
  const data = new Uint32Array(count + slots * 2);
  Buffer.from(data.buffer).set(bytes.subarray(newline + 1, split));
  const lengths = data.subarray(0, count);
  const table = data.subarray(count);
  for (let position = 0; position < count; position++) if (lengths[position] === 0) return undefined;
  const seen = new Uint8Array(count);
  let entries = 0;
  for (let slot = 1; slot < table.length; slot += 2) {
    const position = table[slot]!;
    if (position === 0) continue;
    if (position > count || seen[position - 1] === 1) return undefined;
    seen[position - 1] = 1;
    entries += 1;
  }
  if (entries !== count) return undefined;
  return { headerHash: header, end, lastSeq, lastUnsynced, lengths, table };
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** A log gets an id sidecar once its durable part reaches this size (a smaller one is scanned whole quickly). */
const SIDECAR_MIN_BYTES = 256 * 1024;
/** A sidecar is rewritten when the log's durable part outgrows it by this much, or by 1/{@link SIDECAR_GROWTH} of what it covers if more. */
const SIDECAR_MIN_GAP = 256 * 1024;
const SIDECAR_GROWTH = 32;
const HEADER_PROBE_BYTES = 4096;
const NEWLINE = 0x0a;

/** A complete index's start loaded from an id sidecar. */
export interface SidecarStart {
  start: ScanStart;
  headerBytes: Buffer;
  offsets: number[];
  covered: { table: Uint32Array; count: number };
  end: number;
}

/**
 * Loads the id sidecar of a log this instance has no complete index of (`targetOf` names it, or
 * `undefined` when the sidecars' directory must not be used), trusted only when it
 * passes every check: its CRC and format, the log's header line (the same file, not a replaced
 * one), the file's size, and the line ending where it ends (the record it names last, with a
 * good CRC and the end mark). `undefined` otherwise: the caller scans the file from the start.
 */
export function loadSidecar(io: FsIo, targetOf: () => string | undefined, fd: number, size: number): SidecarStart | undefined {
  if (size < SIDECAR_MIN_BYTES) return undefined;
  let bytes: Buffer;
  let sidecarFd: number | undefined;
  try {
    const target = targetOf();
    if (target === undefined) return undefined;
    const opened = io.openFileSync(target, OPEN_READ);
    sidecarFd = opened.fd;
    bytes = readAt(io, sidecarFd, 0, opened.stat.size);
  } catch {
    return undefined;
  } finally {
    closeQuietly(io, sidecarFd);
  }
  const content = decodeSidecar(bytes);
  if (!content || content.end > size) return undefined;
  const probe = readAt(io, fd, 0, Math.min(HEADER_PROBE_BYTES, size));
  const newline = probe.indexOf(NEWLINE);
  if (newline < 0) return undefined;
  const headerBytes = Buffer.from(probe.subarray(0, newline + 1));
  const parsedHeader = parseLine(headerBytes.subarray(0, newline));
  if (parsedHeader.kind !== "header" || parsedHeader.header.deleted || headerHash(headerBytes) !== content.headerHash) return undefined;
  const { header } = parsedHeader;
  const count = content.lengths.length;
  if (content.lastSeq !== header.baseSeq + count) return undefined;
  const offsets: number[] = new Array<number>(count);
  let offset = headerBytes.length;
  for (let position = 0; position < count; position++) {
    offsets[position] = offset;
    offset += content.lengths[position]!;
  }
  if (offset !== content.end) return undefined;
  const lastLine = readAt(io, fd, offsets[count - 1]!, content.lengths[count - 1]!);
  if (lastLine.length !== content.lengths[count - 1] || lastLine[lastLine.length - 1] !== NEWLINE) return undefined;
  const last = parseLine(lastLine.subarray(0, lastLine.length - 1));
  if (last.kind !== "record" || !last.end || last.record.seq !== content.lastSeq || (last.durableTo !== undefined) !== content.lastUnsynced) return undefined;
  // The table must name the last record under its id's hash.
  let named = false;
  probeIdTable(content.table, idHash(last.record.id), (position) => (named = position === count - 1));
  if (!named) return undefined;
  const start = { offset: content.end, header, lastSeq: content.lastSeq, durableEnd: content.end, lastUnsynced: content.lastUnsynced };
  return { start, headerBytes, offsets, covered: { table: content.table, count }, end: content.end };
}

/** Bytes enough for a sidecar's first line (its meta: a few hundred bytes). */
const META_PROBE_BYTES = 1024;

/**
 * The offset the id sidecar of a log covers up to, read from the sidecar's first line only, when
 * that line is well formed and names this log (`headerBytes`, its header line); 0 otherwise. An
 * index built by a read (which loads no sidecar: it parses every line anyway) takes it as the end
 * its sidecar was last written at, so that every new instance's read does not write the sidecar
 * again. The rest of the sidecar is not checked here: a damaged one is refused by
 * {@link loadSidecar}, and the append that then scans the whole log writes a fresh one.
 */
export function sidecarEndOf(io: FsIo, targetOf: () => string | undefined, headerBytes: Uint8Array): number {
  let sidecarFd: number | undefined;
  let probe: Buffer;
  try {
    const target = targetOf();
    if (target === undefined) return 0;
    sidecarFd = io.openSync(target, OPEN_READ);
    probe = readAt(io, sidecarFd, 0, META_PROBE_BYTES);
  } catch {
    return 0;
  } finally {
    closeQuietly(io, sidecarFd);
  }
  const newline = probe.indexOf(NEWLINE);
  if (newline < 0) return 0;
  let meta: unknown;
  try {
    meta = JSON.parse(probe.subarray(0, newline).toString("latin1"));
  } catch {
    return 0;
  }
  if (typeof meta !== "object" || meta === null) return 0;
  const { format, endian, header, end } = meta as Record<string, unknown>;
  if (format !== SIDECAR_FORMAT || endian !== ENDIAN || !isCount(end) || header !== headerHash(headerBytes)) return 0;
  return end;
}

/**
 * Saves a complete index as the log's id sidecar (at the path `targetOf` names, worked out only
 * when it is written; `undefined`: not written), best effort, when the log is big and the
 * sidecar would cover enough more than the last one. It covers the log only up to a committed
 * batch's end at or before the durable point: the committed end when all of it is durable,
 * else `durableEnd` when (read back through `fd`) a batch ends there; otherwise nothing is written.
 */
export function saveSidecar(io: FsIo, targetOf: () => string | undefined, index: LogIndex, fd: number | undefined): void {
  if (!index.complete || index.header.deleted || index.offsets.length === 0) return;
  const { offsets } = index;
  let count = offsets.length;
  let end = index.committedEnd;
  let lastUnsynced = index.lastUnsynced;
  const unsynced = index.durableEnd < index.committedEnd;
  if (unsynced) end = index.durableEnd;
  // Cheap checks first: this runs after every refresh and synced append of a log.
  if (end < SIDECAR_MIN_BYTES) return;
  if (index.sidecarEnd > 0 && end - index.sidecarEnd < Math.max(SIDECAR_MIN_GAP, index.sidecarEnd / SIDECAR_GROWTH)) return;
  if (unsynced) {
    if (fd === undefined) return;
    // The records before `end`: `end` must be a line start (or the committed end) after an end line.
    let low = 0;
    let high = offsets.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (offsets[middle]! < end) low = middle + 1;
      else high = middle;
    }
    count = low;
    if (count === 0 || offsets[count] !== end) return;
    const line = readAt(io, fd, offsets[count - 1]!, end - offsets[count - 1]! - 1);
    const parsed = parseLine(line);
    if (parsed.kind !== "record" || !parsed.end || parsed.record.seq !== index.firstSeq + count - 1) return;
    lastUnsynced = parsed.durableTo !== undefined;
  }
  const coveredCount = index.covered?.count ?? 0;
  if (coveredCount > count) return;
  // Every position once: the sidecar's own entries, then the ids scanned or appended after them.
  let filled = 0;
  const table = buildIdTable(count, (add) => {
    if (index.covered) eachIdEntry(index.covered.table, add);
    filled = coveredCount;
    for (const id of index.ids) {
      if (filled >= count) break;
      add(idHash(id), filled);
      filled += 1;
    }
  });
  if (filled !== count) return;
  const lengths = new Uint32Array(count);
  for (let position = 0; position < count; position++) {
    const length = (position + 1 < count ? offsets[position + 1]! : end) - offsets[position]!;
    // A line too long for the table's uint32 lengths: no sidecar for this log.
    if (length > 0xffff_ffff) return;
    lengths[position] = length;
  }
  // Not tried again until the log outgrows this point, whether or not the write succeeds.
  index.sidecarEnd = end;
  try {
    const target = targetOf();
    if (target === undefined) return;
    try {
      io.mkdirSync(path.dirname(target));
    } catch (error) {
      if (!isErrno(error, "EEXIST")) throw error;
    }
    const bytes = encodeSidecar({ headerHash: headerHash(index.headerBytes), end, lastSeq: index.firstSeq + count - 1, lastUnsynced, lengths, table });
    writeFileAtomicSync(io, target, bytes);
  } catch {
    // best effort: a cache (a new instance scans the log instead); the write leaves no staging file behind
  }
}
