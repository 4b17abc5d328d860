import { crc32 } from "node:zlib";

/**
 * The JSONL format of a log file. Every line is one JSON object ending with a CRC-32 of the
 * line's bytes before it: `…,"crc":"1a2b3c4d"}\n`.
 *
 * - The first line is a header: `{"format":"keel.log.v1","file":<unique id>,"baseSeq":N,"deleted":false,"at":…}`.
 *   `baseSeq` is the last seq before this file (seqs are never reused after a delete); a deleted
 *   log is a file holding only a header with `"deleted":true`.
 * - Each record: `{"seq":N,"id":…,"at":…,"value":<canonical JSON>}`.
 * - The last line of each append batch carries `"end":true`: a batch counts only once its end
 *   line is complete, so an append is all-or-nothing even when a crash tears the write.
 */
export const LOG_FORMAT = "keel.log.v1";

/** A log file's header. */
export interface LogHeader {
  /** A unique id of this file (a new one whenever the file is replaced). */
  file: string;
  baseSeq: number;
  deleted: boolean;
  at: string;
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
    `{"format":"${LOG_FORMAT}","file":${JSON.stringify(header.file)},"baseSeq":${header.baseSeq},"deleted":${header.deleted},"at":${JSON.stringify(header.at)}${end ? ',"end":true' : ""}`,
  );
}

/** The line of a record whose value is already canonical JSON text. */
export function encodeRecordLine(seq: number, id: string, at: string, valueText: string, end: boolean): string {
  return createRecordEncoder(at)(seq, id, valueText, end);
}

/**
 * An encoder of record lines that share one timestamp (a group commit): the same bytes as
 * {@link encodeRecordLine}, with the timestamp's JSON made once per batch instead of once per line.
 */
export function createRecordEncoder(at: string): (seq: number, id: string, valueText: string, end: boolean) => string {
  const atField = `,"at":${JSON.stringify(at)}`;
  return (seq, id, valueText, end) => seal(`{"seq":${seq},"id":${JSON.stringify(id)}${atField}${end ? ',"end":true' : ""},"value":${valueText}`);
}

type ParsedLine =
  | { kind: "header"; header: LogHeader; end: boolean }
  | { kind: "record"; record: RecordLine; end: boolean; valueBytes: Uint8Array }
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
    const { format, file, baseSeq, deleted, at } = parsed;
    if (format !== LOG_FORMAT) return { kind: "bad", problem: `unknown log format ${JSON.stringify(format)}` };
    if (typeof file !== "string" || typeof deleted !== "boolean" || typeof at !== "string" || !isSeq(baseSeq, 0)) {
      return { kind: "bad", problem: "malformed header" };
    }
    return { kind: "header", header: { file, baseSeq, deleted, at }, end };
  }
  const { seq, id, at } = parsed;
  if (!isSeq(seq, 1) || typeof id !== "string" || id.length === 0 || typeof at !== "string" || !("value" in parsed)) {
    return { kind: "bad", problem: "malformed record" };
  }
  const marker = Buffer.from(line.buffer, line.byteOffset, split).indexOf(',"value":');
  return { kind: "record", record: { seq, id, at, value: parsed.value }, end, valueBytes: prefix.subarray(marker + ',"value":'.length) };
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
  /** Bytes after `committedEnd` that do not form a complete batch: a torn write, or one still in flight. */
  tail: { offset: number; bytes: number } | undefined;
}

/**
 * An incremental scanner: feed it the file's bytes from `start.offset` in chunks of any size,
 * then `finish()`. Fail-closed rules:
 * - a complete (newline-terminated) line that fails its crc, does not parse, breaks the seq
 *   order or sits where it cannot be (a header after the first line, a record after a deletion
 *   header) is damage: the scan stops with its offset;
 * - complete lines of a batch whose end line is missing, and an unterminated last line, form
 *   the tail: an append that never completed (and was never acknowledged).
 */
export function createLogScanner(start: ScanStart): {
  feed(chunk: Uint8Array): ScanProblem | undefined;
  finish(): LogScan;
} {
  let header = start.header;
  let lastSeq = start.lastSeq;
  let committedEnd = start.offset;
  let cursor = start.offset;
  let carry: Uint8Array = new Uint8Array(0);
  let pendingHeader: LogHeader | undefined;
  let pendingSeq = lastSeq;
  const pending: ScannedRecord[] = [];
  const records: ScannedRecord[] = [];

  const line = (bytes: Uint8Array, offset: number): ScanProblem | undefined => {
    const parsed = parseLine(bytes);
    if (parsed.kind === "bad") return { offset, problem: parsed.problem };
    if (parsed.kind === "header") {
      if (offset !== 0 || header || pendingHeader) return { offset, problem: "a header line after the start of the file" };
      pendingHeader = parsed.header;
      pendingSeq = parsed.header.baseSeq;
    } else {
      const current = pendingHeader ?? header;
      if (!current) return { offset, problem: "a record before the header" };
      if (current.deleted) return { offset, problem: "a record after a deletion header" };
      if (parsed.record.seq !== pendingSeq + 1) {
        return { offset, problem: `seq ${parsed.record.seq} where ${pendingSeq + 1} was expected` };
      }
      pendingSeq = parsed.record.seq;
      pending.push({ seq: parsed.record.seq, id: parsed.record.id, offset });
    }
    if (parsed.end) {
      if (pendingHeader) header = pendingHeader;
      pendingHeader = undefined;
      records.push(...pending.splice(0));
      lastSeq = pendingSeq;
      committedEnd = offset + bytes.length + 1;
    }
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
      const end = cursor + carry.length;
      return { header, lastSeq, committedEnd, records, tail: end > committedEnd ? { offset: committedEnd, bytes: end - committedEnd } : undefined };
    },
  };
}

/** Scans a whole buffer (the file from `start.offset`): a convenience over {@link createLogScanner}. */
export function scanLogBytes(bytes: Uint8Array, start: ScanStart = { offset: 0, header: undefined, lastSeq: 0 }): LogScan | ScanProblem {
  const scanner = createLogScanner(start);
  const problem = scanner.feed(bytes);
  return problem ?? scanner.finish();
}
