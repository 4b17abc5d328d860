import path from "node:path";
import type { JsonValue } from "@keel/core";
import { type LogRecord, type LogStore } from "@keel/store";
import { compareKeys, validateAppend, validateFenceOption, validateKey, validateReadOptions } from "@keel/store/kit";
import { errAsync } from "neverthrow";
import type { FsContext } from "./fs-context.js";
import { closeQuietly, isErrno, readAt } from "./fs-io.js";
import { parseLine } from "./log-format.js";
import { logCorrupt } from "./log-index.js";
import { createLogWriter } from "./log-writer.js";
import { segmentOfLogFile } from "./fs-paths.js";
import { collectKeys } from "./key-walk.js";

const HEADER_PROBE_BYTES = 4096;

/** Reads the records of an open, refreshed log between two byte offsets. */
function parseRecords(file: string, bytes: Buffer, startOffset: number): LogRecord[] {
  const records: LogRecord[] = [];
  let lineStart = 0;
  while (lineStart < bytes.length) {
    const newline = bytes.indexOf(0x0a, lineStart);
    const end = newline < 0 ? bytes.length : newline;
    const parsed = parseLine(bytes.subarray(lineStart, end));
    if (parsed.kind !== "record") throw logCorrupt(file, startOffset + lineStart, parsed.kind === "bad" ? parsed.problem : "a header among records");
    const { seq, id, at, value } = parsed.record;
    records.push({ seq, id, value: value as JsonValue, at });
    lineStart = end + 1;
  }
  return records;
}

/** True when the log file exists and is live (its header says it is not deleted). */
function isLiveLog(context: FsContext, file: string): boolean {
  let fd: number | undefined;
  try {
    fd = context.io.openSync(file, "r");
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
        // Only the records after `afterSeq` are needed: a big log not yet indexed is read from its tail.
        const view = context.logIndex.open(file, "r", afterSeq);
        try {
          const index = view.index;
          if (!index || index.header.deleted || view.fd === undefined) return [];
          const count = index.offsets.length;
          const first = Math.max(0, afterSeq + 1 - index.firstSeq);
          if (first >= count) return [];
          const last = Math.min(count, first + limit);
          const from = index.offsets[first]!;
          const to = last < count ? index.offsets[last]! : index.committedEnd;
          return parseRecords(file, readAt(context.io, view.fd, from, to - from - 1), from);
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
        const view = context.logIndex.open(file, "r", Number.MAX_SAFE_INTEGER);
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
