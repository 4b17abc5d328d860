import { crc32 } from "node:zlib";

/**
 * The JSONL format of a log file. Every line is one JSON object ending with a CRC-32 of the
 * line's bytes before it: `…,"crc":"1a2b3c4d"}\n`.
 *
 * - The first line is a header: `{"format":"keel.log.v1","file":<unique id>,"baseSeq":N,"deleted":false,"at":…}`,
 *   with `"buffered":true` when a buffered append (`durable: false`) created the log.
 *   `baseSeq` is the last seq before this file (seqs are never reused after a delete); a deleted
 *   log is a file holding only a header with `"deleted":true`.
 * - Each record: `{"seq":N,"id":…,"at":…,"value":<canonical JSON>}`.
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
const CRC_SUFFIX = /^,"crc":"([0-9a-f]{8})"\}$/;
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

/** The line of a record whose value is already canonical JSON text. */
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

type ParsedLine =
  | { kind: "header"; header: LogHeader; end: boolean }
  | { kind: "record"; record: RecordLine; end: boolean; valueBytes: Uint8Array; durableTo?: number }
  | { kind: "bad"; problem: string };

/** Parses and verifies one line (without its newline). */
export function parseLine(line: Uint8Array): ParsedLine {
  if (line.length <= CRC_SUFFIX_LENGTH + 1) return { kind: "bad", problem: "line too short" };
  const split = line.length - CRC_SUFFIX_LENGTH;
  const suffix = CRC_SUFFIX.exec(Buffer.from(line.buffer, line.byteOffset + split, CRC_SUFFIX_LENGTH).toString("latin1"));
  if (!suffix) return { kind: "bad", problem: "no crc at the end of the line" };
  const prefix = line.subarray(0, split);
  if (crc32(prefix) !== Number.parseInt(suffix[1]!, 16)) return { kind: "bad", problem: "crc mismatch" };
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(Buffer.from(line.buffer, line.byteOffset, line.length).toString("utf8")) as Record<string, unknown>;
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
  const marker = Buffer.from(line.buffer, line.byteOffset, split).indexOf(',"value":');
  const valueBytes = prefix.subarray(marker + ',"value":'.length);
  const record = { seq, id, at, value: parsed.value };
  return durableTo === undefined ? { kind: "record", record, end, valueBytes } : { kind: "record", record, end, valueBytes, durableTo };
}

function isSeq(value: unknown, min: number): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= min;
}

/** Damage found by a scan: where, and what. */
export interface ScanProblem {
  offset: number;
  problem: string;
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
 */
export function createLogScanner(start: ScanStart): {
  feed(chunk: Uint8Array): ScanProblem | undefined;
  finish(): LogScan | ScanProblem;
} {
  let header = start.header;
  let lastSeq = start.lastSeq;
  let committedEnd = start.offset;
  let durableEnd = start.durableEnd ?? 0;
  let lastUnsynced = start.lastUnsynced ?? false;
  let cursor = start.offset;
  let carry: Uint8Array = new Uint8Array(0);
  let pendingHeader: LogHeader | undefined;
  let pendingSeq = lastSeq;
  const pending: ScannedRecord[] = [];
  const records: ScannedRecord[] = [];
  /** The first damage, while it may still be a power loss's (what follows is only checked for proofs). */
  let damage: { problem: ScanProblem; unsyncedSeen: boolean } | undefined;

  /** After damage: a valid line may prove the damaged bytes were durable (then it is real damage). */
  const afterDamage = (bytes: Uint8Array, found: { problem: ScanProblem; unsyncedSeen: boolean }): ScanProblem | undefined => {
    const parsed = parseLine(bytes);
    if (parsed.kind !== "record" || !parsed.end) return undefined;
    if (parsed.durableTo === undefined || parsed.durableTo > committedEnd) return found.problem;
    found.unsyncedSeen = true;
    return undefined;
  };

  const line = (bytes: Uint8Array, offset: number): ScanProblem | undefined => {
    if (damage) return afterDamage(bytes, damage);
    const parsed = parseLine(bytes);
    const problem = check(parsed, offset);
    if (problem) {
      damage = { problem, unsyncedSeen: lastUnsynced || (pendingHeader ?? header)?.buffered === true };
      pending.splice(0);
      pendingHeader = undefined;
      return undefined;
    }
    if (parsed.kind === "bad") return undefined;
    if (parsed.kind === "header") {
      pendingHeader = parsed.header;
      pendingSeq = parsed.header.baseSeq;
    } else {
      pendingSeq = parsed.record.seq;
      pending.push({ seq: parsed.record.seq, id: parsed.record.id, offset });
    }
    if (parsed.end) {
      if (pendingHeader) header = pendingHeader;
      pendingHeader = undefined;
      records.push(...pending.splice(0));
      lastSeq = pendingSeq;
      committedEnd = offset + bytes.length + 1;
      const durableTo = parsed.kind === "record" ? parsed.durableTo : undefined;
      lastUnsynced = durableTo !== undefined;
      durableEnd = durableTo === undefined ? committedEnd : Math.max(durableEnd, durableTo);
    }
    return undefined;
  };

  /** The damage of a line where it stands, if any. */
  const check = (parsed: ParsedLine, offset: number): ScanProblem | undefined => {
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
      let lineStart = 0;
      for (;;) {
        const newline = bytes.indexOf(NEWLINE, lineStart);
        if (newline < 0) break;
        const problem = line(bytes.subarray(lineStart, newline), cursor + lineStart);
        if (problem) return problem;
        lineStart = newline + 1;
      }
      cursor += lineStart;
      carry = bytes.subarray(lineStart);
      return undefined;
    },
    finish() {
      if (damage && !damage.unsyncedSeen) return damage.problem;
      const end = cursor + carry.length;
      const tail = end > committedEnd ? { offset: committedEnd, bytes: end - committedEnd, ...(damage ? { lost: damage.problem } : {}) } : undefined;
      return { header, lastSeq, committedEnd, durableEnd, lastUnsynced, records, tail };
    },
  };
}

/** Scans a whole buffer (the file from `start.offset`): a convenience over {@link createLogScanner}. */
export function scanLogBytes(bytes: Uint8Array, start: ScanStart = { offset: 0, header: undefined, lastSeq: 0 }): LogScan | ScanProblem {
  const scanner = createLogScanner(start);
  return scanner.feed(bytes) ?? scanner.finish();
}
