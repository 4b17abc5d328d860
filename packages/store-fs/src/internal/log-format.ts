import { isAscii } from "node:buffer";
import { crc32 } from "node:zlib";

/**
 * The JSONL format of a log file. Every line is one JSON object ending with a CRC-32 of the
 * line's bytes before it: `…,"crc":"1a2b3c4d"}\n`.
 *
 * - The first line is a header: `{"format":"keel.log.v1","file":<unique id>,"baseSeq":N,"deleted":false,"at":…}`,
 *   with `"buffered":true` when a buffered append (`durable: false`) created the log.
 *   `baseSeq` is the last seq before this file (seqs are never reused after a delete); a deleted
 *   log is a file holding only a header with `"deleted":true`.
 * - Each record: `{"seq":N,"id":…,"at":…,"value":<JSON text, the writer's key order>}`.
 * - The last line of each append batch carries `"end":true`: a batch counts only once its end
 *   line is complete, so an append is all-or-nothing even when a crash tears the write.
 * - The end line of a batch written without `fdatasync` (appends with `durable: false`) also
 *   carries `"durableTo":D`: the byte offset up to which the file was known durable when the
 *   batch was written (the end of the last synced batch, or of the last background sync). A
 *   power loss can only damage bytes after the durable point (an `fdatasync` flushes every
 *   dirty byte of the file, so unsynced bytes lie only after the last synced batch), but
 *   anywhere in them, pages being written back in any order: see {@link createLogScanner}.
 */
export const LOG_FORMAT = "keel.log.v1";

/** A log file's header. */
export interface LogHeader {
  /** A unique id of this file (a new one whenever the file is replaced). */
  file: string;
  baseSeq: number;
  deleted: boolean;
  at: string;
  /** The log was created by a buffered append (`durable: false`): its writer does not sync each batch. */
  buffered?: boolean;
}

/**
 * A record as the scanner keeps it: enough to find it again by id. A re-appended id is compared
 * with the stored value by reading its line back (rare), so the index holds no value digests.
 */
export interface ScannedRecord {
  seq: number;
  id: string;
  /** Byte offset of its line. */
  offset: number;
}

/** A record read back. */
export interface RecordLine {
  seq: number;
  id: string;
  at: string;
  value: unknown;
}

const CRC_SUFFIX_LENGTH = ',"crc":"00000000"}'.length;
const CRC_SUFFIX_HEAD = ',"crc":"';
const NEWLINE = 0x0a;

function seal(prefix: string): string {
  return `${prefix},"crc":"${crc32(prefix).toString(16).padStart(8, "0")}"}\n`;
}

/** The line of a header; `end` when it is a batch on its own (an empty or deleted log). */
export function encodeHeaderLine(header: LogHeader, end: boolean): string {
  return seal(
    `{"format":"${LOG_FORMAT}","file":${JSON.stringify(header.file)},"baseSeq":${header.baseSeq},"deleted":${header.deleted},"at":${JSON.stringify(header.at)}${header.buffered ? ',"buffered":true' : ""}${end ? ',"end":true' : ""}`,
  );
}

/** The line of a record whose value is already JSON text. */
export function encodeRecordLine(seq: number, id: string, at: string, valueText: string, end: boolean, durableTo?: number): string {
  return createRecordEncoder(at)(seq, id, valueText, end, durableTo);
}

/**
 * An encoder of record lines that share one timestamp (a group commit): the same bytes as
 * {@link encodeRecordLine}, with the timestamp's JSON made once per batch instead of once per line.
 * `durableTo` (end lines only) marks a batch written without `fdatasync`.
 */
export function createRecordEncoder(at: string): (seq: number, id: string, valueText: string, end: boolean, durableTo?: number) => string {
  const atField = `,"at":${JSON.stringify(at)}`;
  return (seq, id, valueText, end, durableTo) =>
    seal(`{"seq":${seq},"id":${JSON.stringify(id)}${atField}${end ? (durableTo === undefined ? ',"end":true' : `,"end":true,"durableTo":${durableTo}`) : ""},"value":${valueText}`);
}

/** A line checked and parsed (see {@link parseLineText}). */
export type CheckedLine =
  | { kind: "header"; header: LogHeader; end: boolean }
  | { kind: "record"; record: RecordLine; end: boolean; durableTo?: number }
  | { kind: "bad"; problem: string };

type ParsedLine =
  | Exclude<CheckedLine, { kind: "record" }>
  | { kind: "record"; record: RecordLine; end: boolean; valueBytes: Uint8Array; durableTo?: number };

/** Parses and verifies one line (without its newline). */
export function parseLine(line: Uint8Array): ParsedLine {
  const parsed = parseLineText(line, 0, line.length, Buffer.from(line.buffer, line.byteOffset, line.length).toString("utf8"));
  if (parsed.kind !== "record") return parsed;
  const marker = Buffer.from(line.buffer, line.byteOffset, line.length - CRC_SUFFIX_LENGTH).indexOf(',"value":');
  return { ...parsed, valueBytes: line.subarray(marker + ',"value":'.length, line.length - CRC_SUFFIX_LENGTH) };
}

/**
 * The CRC a line's text ends with (`,"crc":"1a2b3c4d"}`), or -1 when it does not end so. Those
 * 18 characters are ASCII, so they are also the line's last 18 bytes (a byte that is not ASCII,
 * valid UTF-8 or not, never decodes to one).
 */
function crcOfSuffix(text: string): number {
  const split = text.length - CRC_SUFFIX_LENGTH;
  if (split < 0 || !text.startsWith(CRC_SUFFIX_HEAD, split) || text.charCodeAt(text.length - 2) !== 0x22 || text.charCodeAt(text.length - 1) !== 0x7d) return -1;
  let crc = 0;
  for (let position = split + CRC_SUFFIX_HEAD.length; position < text.length - 2; position++) {
    const code = text.charCodeAt(position);
    const digit = code >= 0x30 && code <= 0x39 ? code - 0x30 : code >= 0x61 && code <= 0x66 ? code - 0x57 : -1;
    if (digit < 0) return -1;
    crc = crc * 16 + digit;
  }
  return crc;
}

/**
 * Verifies and parses the line `bytes[lineStart, lineEnd)` (without its newline) whose text (its bytes
 * decoded as UTF-8) is `text`: the CRC is checked on the bytes, the JSON parsed from the text, so a
 * caller that decoded many lines at once (see {@link eachLine}) decodes nothing again.
 */
export function parseLineText(bytes: Uint8Array, lineStart: number, lineEnd: number, text: string): CheckedLine {
  if (lineEnd - lineStart <= CRC_SUFFIX_LENGTH + 1) return { kind: "bad", problem: "line too short" };
  const crc = crcOfSuffix(text);
  if (crc < 0) return { kind: "bad", problem: "no crc at the end of the line" };
  if (crc32(bytes.subarray(lineStart, lineEnd - CRC_SUFFIX_LENGTH)) !== crc) return { kind: "bad", problem: "crc mismatch" };
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { kind: "bad", problem: "not valid JSON" };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { kind: "bad", problem: "not a JSON object" };
  const end = parsed.end === true;
  if ("format" in parsed) {
    const { format, file, baseSeq, deleted, at, buffered } = parsed;
    if (format !== LOG_FORMAT) return { kind: "bad", problem: `unknown log format ${JSON.stringify(format)}` };
    if (typeof file !== "string" || typeof deleted !== "boolean" || typeof at !== "string" || !isSeq(baseSeq, 0) || (buffered !== undefined && buffered !== true)) {
      return { kind: "bad", problem: "malformed header" };
    }
    return { kind: "header", header: buffered ? { file, baseSeq, deleted, at, buffered } : { file, baseSeq, deleted, at }, end };
  }
  const { seq, id, at, durableTo } = parsed;
  if (!isSeq(seq, 1) || typeof id !== "string" || id.length === 0 || typeof at !== "string" || !("value" in parsed)) {
    return { kind: "bad", problem: "malformed record" };
  }
  if (durableTo !== undefined && (!end || !isSeq(durableTo, 0))) return { kind: "bad", problem: "malformed durableTo" };
  const record = { seq, id, value: parsed.value, at };
  return durableTo === undefined ? { kind: "record", record, end } : { kind: "record", record, end, durableTo };
}

/**
 * Bytes decoded at a time by {@link eachLine}: a string this small is made in V8's young
 * generation, several times faster than a larger one (measured: tens of times on a 2-core VM).
 */
const DECODE_BYTES = 64 * 1024;

/**
 * Calls `visit(start, end, text)` for each complete (newline-terminated) line of `bytes`, in
 * order: its byte offsets (newline excluded) and its text. The lines are decoded together, a
 * piece of whole lines at a time (a newline byte never belongs to a multi-byte character, so the
 * text splits where the bytes do). Stops after a visit that returns true. Answers the offset just
 * after the last line visited.
 */
export function eachLine(bytes: Uint8Array, visit: (start: number, end: number, text: string) => boolean | undefined): number {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const last = buffer.lastIndexOf(NEWLINE);
  let pieceStart = 0;
  while (pieceStart <= last) {
    // The newline that ends the piece: the last within DECODE_BYTES, or the next one (a longer line, alone).
    let pieceEnd = pieceStart + DECODE_BYTES > last ? last : buffer.lastIndexOf(NEWLINE, pieceStart + DECODE_BYTES - 1);
    if (pieceEnd < pieceStart) pieceEnd = buffer.indexOf(NEWLINE, pieceStart);
    // ASCII (most logs) decodes to the same text as Latin-1, faster than as UTF-8.
    const text = buffer.toString(isAscii(buffer.subarray(pieceStart, pieceEnd)) ? "latin1" : "utf8", pieceStart, pieceEnd);
    let lineStart = pieceStart;
    let textStart = 0;
    while (lineStart <= pieceEnd) {
      const newline = buffer.indexOf(NEWLINE, lineStart);
      const textEnd = newline === pieceEnd ? text.length : text.indexOf("\n", textStart);
      if (visit(lineStart, newline, text.slice(textStart, textEnd))) return newline + 1;
      lineStart = newline + 1;
      textStart = textEnd + 1;
    }
    pieceStart = pieceEnd + 1;
  }
  return last + 1;
}

function isSeq(value: unknown, min: number): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= min;
}

/** Damage found by a scan: where, and what. */
export interface ScanProblem {
  offset: number;
  problem: string;
}

/**
 * The records a scan keeps parsed, for a read that shares the scan's pass over the file: those
 * with `afterSeq < seq <= afterSeq + limit` (`limit` may be infinite), once their batch is committed.
 */
export interface KeepRecords {
  afterSeq: number;
  limit: number;
}

/** Where a scan starts: the start of the file, or the committed end of an earlier scan. */
export interface ScanStart {
  offset: number;
  header: LogHeader | undefined;
  lastSeq: number;
  /** The durable point known so far (see {@link LogScan.durableEnd}); default 0. */
  durableEnd?: number;
  /** Whether the last committed batch before `offset` was written without `fdatasync`; default false. */
  lastUnsynced?: boolean;
}

/** What a scan found. */
export interface LogScan {
  header: LogHeader | undefined;
  /** The last committed seq (the header's `baseSeq` when there are no records). */
  lastSeq: number;
  /** The byte offset just after the last complete batch. */
  committedEnd: number;
  /** The committed records found by this scan, in seq order. */
  records: ScannedRecord[];
  /** The committed records found by this scan that the scan was asked to keep (`keep`), parsed, in seq order. */
  kept: RecordLine[];
  /**
   * A lower bound of the byte offset up to which the file is durable: the end of the last batch
   * written with `fdatasync`, or the largest `durableTo` a later unsynced batch names.
   */
  durableEnd: number;
  /** Whether the last committed batch was written without `fdatasync`. */
  lastUnsynced: boolean;
  /**
   * Bytes after `committedEnd` that do not form a complete batch: a torn write, or one still in
   * flight; with `lost`, unsynced batches damaged by a power loss (the damage found first).
   */
  tail: { offset: number; bytes: number; lost?: ScanProblem } | undefined;
}

/**
 * An incremental scanner: feed it the file's bytes from `start.offset` in chunks of any size,
 * then `finish()`. Fail-closed rules:
 * - a complete (newline-terminated) line that fails its crc, does not parse, breaks the seq
 *   order or sits where it cannot be (a header after the first line, a record after a deletion
 *   header) is damage: the scan stops with its offset;
 * - complete lines of a batch whose end line is missing, and an unterminated last line, form
 *   the tail: an append that never completed (and was never acknowledged);
 * - except damage a power loss can explain: unsynced batches (`durableTo`) may be torn anywhere
 *   after the file's durable point. Damage is read as such a loss, and everything from the last
 *   complete batch before it on becomes the tail (`lost`), when (1) nothing after it proves
 *   that bytes there were durable: no valid end line of a synced batch after it, none naming a
 *   `durableTo` beyond the last complete batch; and (2) something shows the writer was not
 *   syncing there: the last complete batch before it, or a valid end line after it, is unsynced,
 *   or the log was created by a buffered append (its header says `"buffered":true`).
 *   Anything else stays damage. A log written only with durable appends reads as before.
 *
 * Each line is checked and parsed once; with `keep`, the parsed records a read asked for are
 * kept (see {@link KeepRecords}), so that the read needs no second pass over the same bytes.
 */
export function createLogScanner(
  start: ScanStart,
  keep?: KeepRecords,
): {
  feed(chunk: Uint8Array): ScanProblem | undefined;
  /**
   * Forgets the bytes after the last complete line fed when they are only the end of the last
   * chunk (the caller then feeds them again at the start of its next chunk, read from the file:
   * cheaper than a copy of the whole chunk with them), and answers how many; 0 otherwise.
   */
  rewind(): number;
  finish(): LogScan | ScanProblem;
} {
  let header = start.header;
  let lastSeq = start.lastSeq;
  let committedEnd = start.offset;
  let durableEnd = start.durableEnd ?? 0;
  let lastUnsynced = start.lastUnsynced ?? false;
  let cursor = start.offset;
  let carry: Uint8Array = new Uint8Array(0);
  /** The carry is all of the bytes fed last (no line ended in them). */
  let carriedWhole = false;
  let pendingHeader: LogHeader | undefined;
  let pendingSeq = lastSeq;
  const pending: ScannedRecord[] = [];
  const records: ScannedRecord[] = [];
  const pendingKept: RecordLine[] = [];
  const kept: RecordLine[] = [];
  const keepFrom = keep ? keep.afterSeq + 1 : Number.POSITIVE_INFINITY;
  const keepTo = keep ? keep.afterSeq + keep.limit : 0;
  /** The first damage, while it may still be a power loss's (what follows is only checked for proofs). */
  let damage: { problem: ScanProblem; unsyncedSeen: boolean } | undefined;

  /** After damage: a valid line may prove the damaged bytes were durable (then it is real damage). */
  const afterDamage = (parsed: CheckedLine, found: { problem: ScanProblem; unsyncedSeen: boolean }): ScanProblem | undefined => {
    if (parsed.kind !== "record" || !parsed.end) return undefined;
    if (parsed.durableTo === undefined || parsed.durableTo > committedEnd) return found.problem;
    found.unsyncedSeen = true;
    return undefined;
  };

  /** One complete line: `bytes[start, end)`, its text, at file offset `offset`. */
  const line = (bytes: Uint8Array, start: number, end: number, text: string, offset: number): ScanProblem | undefined => {
    const parsed = parseLineText(bytes, start, end, text);
    if (damage) return afterDamage(parsed, damage);
    const problem = check(parsed, offset);
    if (problem) {
      damage = { problem, unsyncedSeen: lastUnsynced || (pendingHeader ?? header)?.buffered === true };
      pending.length = 0;
      pendingKept.length = 0;
      pendingHeader = undefined;
      return undefined;
    }
    if (parsed.kind === "bad") return undefined;
    if (parsed.kind === "header") {
      pendingHeader = parsed.header;
      pendingSeq = parsed.header.baseSeq;
    } else {
      const { record } = parsed;
      pendingSeq = record.seq;
      pending.push({ seq: record.seq, id: record.id, offset });
      if (record.seq >= keepFrom && record.seq <= keepTo) pendingKept.push(record);
    }
    if (parsed.end) {
      if (pendingHeader) header = pendingHeader;
      pendingHeader = undefined;
      for (const record of pending) records.push(record);
      pending.length = 0;
      for (const record of pendingKept) kept.push(record);
      pendingKept.length = 0;
      lastSeq = pendingSeq;
      committedEnd = offset + (end - start) + 1;
      const durableTo = parsed.kind === "record" ? parsed.durableTo : undefined;
      lastUnsynced = durableTo !== undefined;
      durableEnd = durableTo === undefined ? committedEnd : Math.max(durableEnd, durableTo);
    }
    return undefined;
  };

  /** The damage of a line where it stands, if any. */
  const check = (parsed: CheckedLine, offset: number): ScanProblem | undefined => {
    if (parsed.kind === "bad") return { offset, problem: parsed.problem };
    if (parsed.kind === "header") {
      if (offset !== 0 || header || pendingHeader) return { offset, problem: "a header line after the start of the file" };
      return undefined;
    }
    const current = pendingHeader ?? header;
    if (!current) return { offset, problem: "a record before the header" };
    if (current.deleted) return { offset, problem: "a record after a deletion header" };
    if (parsed.record.seq !== pendingSeq + 1) return { offset, problem: `seq ${parsed.record.seq} where ${pendingSeq + 1} was expected` };
    return undefined;
  };

  return {
    feed(chunk) {
      const bytes = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      let problem: ScanProblem | undefined;
      const consumed = eachLine(bytes, (start, end, text) => (problem = line(bytes, start, end, text, cursor + start)) !== undefined);
      if (problem) return problem;
      cursor += consumed;
      carry = bytes.subarray(consumed);
      carriedWhole = consumed === 0;
      return undefined;
    },
    rewind() {
      if (carriedWhole) return 0;
      const length = carry.length;
      carry = new Uint8Array(0);
      return length;
    },
    finish() {
      if (damage && !damage.unsyncedSeen) return damage.problem;
      const end = cursor + carry.length;
      const tail = end > committedEnd ? { offset: committedEnd, bytes: end - committedEnd, ...(damage ? { lost: damage.problem } : {}) } : undefined;
      return { header, lastSeq, committedEnd, durableEnd, lastUnsynced, records, kept, tail };
    },
  };
}

/** Scans a whole buffer (the file from `start.offset`): a convenience over {@link createLogScanner}. */
export function scanLogBytes(bytes: Uint8Array, start: ScanStart = { offset: 0, header: undefined, lastSeq: 0 }, keep?: KeepRecords): LogScan | ScanProblem {
  const scanner = createLogScanner(start, keep);
  return scanner.feed(bytes) ?? scanner.finish();
}
