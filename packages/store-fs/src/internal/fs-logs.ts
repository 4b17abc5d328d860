import path from "node:path";
import { type LogRecord, type LogStore } from "@keel/store";
import { compareKeys, validateAppend, validateFenceOption, validateKey, validateReadOptions } from "@keel/store/kit";
import { errAsync } from "neverthrow";
import type { FsContext } from "./fs-context.js";
import { closeQuietly, isErrno, OPEN_READ, readAt } from "./fs-io.js";
import { eachLine, parseLine, parseLineText } from "./log-format.js";
import { logCorrupt } from "./log-index.js";
import { createLogWriter } from "./log-writer.js";
import { segmentOfLogFile } from "./fs-paths.js";
import { collectKeys } from "./key-walk.js";

const HEADER_PROBE_BYTES = 4096;

/** Bytes read at a time by a read (a line longer than this is read whole, in a larger piece). */
const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * Reads the records of an open, indexed log whose lines span `[from, to)` into `records`, a
 * chunk of whole lines at a time: each line verified by its CRC and parsed once.
 */
function readRecords(context: FsContext, file: string, fd: number, from: number, to: number, records: LogRecord[]): void {
  let position = from;
  let chunkBytes = READ_CHUNK_BYTES;
  while (position < to) {
    const wanted = Math.min(chunkBytes, to - position);
    const bytes = readAt(context.io, fd, position, wanted);
    let problem: { offset: number; problem: string } | undefined;
    const consumed = eachLine(bytes, (start, end, text) => {
      const parsed = parseLineText(bytes, start, end, text);
      if (parsed.kind === "record") {
        records.push(parsed.record as LogRecord);
        return false;
      }
      problem = { offset: position + start, problem: parsed.kind === "bad" ? parsed.problem : "a header among records" };
      return true;
    });
    if (problem) throw logCorrupt(file, problem.offset, problem.problem);
    if (bytes.length < wanted || (consumed === 0 && wanted === to - position)) {
      // The file ends, or its last line asked for does, where the index holds no line end (changed since it was indexed).
      const rest = parseLine(bytes.subarray(consumed));
      throw logCorrupt(file, position + consumed, rest.kind === "bad" ? rest.problem : "the line is cut short");
    }
    position += consumed;
    if (consumed === 0) chunkBytes *= 2;
  }
}

/** True when the log file exists and is live (its header says it is not deleted). */
function isLiveLog(context: FsContext, file: string): boolean {
  let fd: number | undefined;
  try {
    fd = context.io.openSync(file, OPEN_READ);
    const probe = readAt(context.io, fd, 0, HEADER_PROBE_BYTES);
    const newline = probe.indexOf(0x0a);
    if (newline < 0) return false;
    const parsed = parseLine(probe.subarray(0, newline));
    if (parsed.kind === "bad") throw logCorrupt(file, 0, parsed.problem);
    return parsed.kind === "header" && !parsed.header.deleted;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return false;
    throw error;
  } finally {
    closeQuietly(context.io, fd);
  }
}


/**
 * The log store: one JSONL file per log. Appends and deletes go through the group-commit writer;
 * reads and heads take no lock (they never see an incomplete batch).
 */
export function createFsLogStore(context: FsContext): LogStore {
  const writer = createLogWriter(context);
  return {
    append: (log, records, options) => {
      const segments = validateKey(log, "log");
      if (segments.isErr()) return errAsync(segments.error);
      const parsed = validateAppend(records, options, context.maxValueBytes);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("append to log", () => writer.append(segments.value, parsed.value.records, parsed.value.options));
    },
    read: (log, options) => {
      const segments = validateKey(log, "log");
      if (segments.isErr()) return errAsync(segments.error);
      const parsed = validateReadOptions(options);
      if (parsed.isErr()) return errAsync(parsed.error);
      const { afterSeq, limit } = parsed.value;
      return context.operation("read log", () => {
        const file = context.paths.logFile(segments.value);
        context.guard.contain(path.dirname(file));
        // Only the records after `afterSeq` are needed: a big log not yet indexed is read from its
        // tail. The records the index scan reads now are kept parsed: each line is parsed once.
        const view = context.logIndex.open(file, "r", { afterSeq, keep: { afterSeq, limit } });
        try {
          const index = view.index;
          if (!index || index.header.deleted || view.fd === undefined) return [];
          const count = index.offsets.length;
          const first = Math.max(0, afterSeq + 1 - index.firstSeq);
          if (first >= count) return [];
          // The records asked for that were indexed before this call are read from the file; the
          // rest (the newest) the scan just kept.
          const kept = view.kept;
          const keptFrom = kept.length > 0 ? kept[0]!.seq - index.firstSeq : count;
          const last = Math.min(count, first + limit, keptFrom);
          const records: LogRecord[] = [];
          if (first < last) {
            const to = last < count ? index.offsets[last]! : index.committedEnd;
            readRecords(context, file, view.fd, index.offsets[first]!, to, records);
          }
          for (const record of kept) records.push(record as LogRecord);
          return records;
        } finally {
          closeQuietly(context.io, view.fd);
        }
      });
    },
    head: (log) => {
      const segments = validateKey(log, "log");
      if (segments.isErr()) return errAsync(segments.error);
      return context.operation("read log head", () => {
        const file = context.paths.logFile(segments.value);
        context.guard.contain(path.dirname(file));
        // The head needs no record: a big log not yet indexed is read from its tail only.
        const view = context.logIndex.open(file, "r", { afterSeq: Number.MAX_SAFE_INTEGER });
        closeQuietly(context.io, view.fd);
        return view.index && !view.index.header.deleted ? { lastSeq: view.index.lastSeq } : undefined;
      });
    },
    delete: (log, options) => {
      const segments = validateKey(log, "log");
      if (segments.isErr()) return errAsync(segments.error);
      const parsed = validateFenceOption(options);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("delete log", () => writer.delete(segments.value, parsed.value.fence));
    },
    list: (prefix) => {
      const segments = validateKey(prefix, "prefix", true);
      if (segments.isErr()) return errAsync(segments.error);
      return context.operation("list logs", () => collectKeys(context, segments.value, segmentOfLogFile, (file) => isLiveLog(context, file)).sort(compareKeys));
    },
  };
}
