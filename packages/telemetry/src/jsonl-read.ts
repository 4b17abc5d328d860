import { readFile, stat } from "node:fs/promises";
import { KeelError, toKeelError, utf8Bytes, validate, type JsonValue, type KeelEvent } from "@keel/core";
import { err, errAsync, ok, ResultAsync, type Result } from "neverthrow";
import { z } from "zod";
import { KeelEventSchema } from "./event-schema.js";

/** The default largest events file {@link readEventsJsonl} reads: 256 MiB. */
export const DEFAULT_MAX_EVENTS_FILE_BYTES = 256 * 1024 * 1024;

/** A last line cut short by an interrupted write: no newline after it, and not complete JSON. */
export interface TornLine {
  /** Its 1-based line number. */
  line: number;
  /** Its length in UTF-8 bytes. */
  bytes: number;
}

/** The events of a JSONL file, and the torn last line that was left out, if any. */
export interface EventsJsonl {
  /** The events in file order. */
  events: KeelEvent[];
  /** A torn last line (left out of `events`), or `null` when the file ended cleanly. */
  torn: TornLine | null;
}

/** Options of {@link readEventsJsonl}. */
export interface ReadEventsJsonlOptions {
  /** The largest file read, in bytes; a larger one is `too_large`. Default 256 MiB. */
  maxBytes?: number;
}

const ParseArgumentsSchema = z.tuple([z.string(), z.string().min(1)]);
const ReadArgumentsSchema = z.tuple([
  z.string().min(1),
  z.strictObject({ maxBytes: z.number().int().positive().optional() }).optional(),
]);

function corrupt(source: string, line: number, problem: string, issues: JsonValue = null): KeelError {
  return new KeelError("corrupt", `${source} line ${line} is not a Keel event: ${problem}`, {
    details: { location: `${source}:${line}`, line, issues },
  });
}

function parseLine(text: string): { json: unknown } | undefined {
  try {
    return { json: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/**
 * Parses the text of an events JSONL file (one event per line, each line ended by a newline).
 * Fails closed: a line in the middle that is not JSON, not an object with `type` and `at`, or
 * a catalogue event with bad fields, is `corrupt` with its line number in `details.line` and
 * `details.location` (`<source>:<line>`); so is a blank line. Only a torn last line — no newline
 * after it and not complete JSON, as an interrupted writer leaves it — is left out and reported
 * in `torn`. Pure.
 *
 * @param source - names the text in messages and locations (usually the file path).
 */
export function parseEventsJsonl(text: string, source = "events"): Result<EventsJsonl, KeelError> {
  const checked = validate(ParseArgumentsSchema, [text, source], "events JSONL text");
  if (checked.isErr()) return err(checked.error);
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = body.split("\n");
  const tail = lines.pop() ?? "";
  const events: KeelEvent[] = [];
  const accept = (line: string, number: number, last: boolean): Result<"torn" | "ok", KeelError> => {
    if (line.trim() === "") return err(corrupt(source, number, "blank line"));
    const parsed = parseLine(line);
    if (!parsed) return last ? ok("torn") : err(corrupt(source, number, "not valid JSON"));
    const event = validate(KeelEventSchema, parsed.json, "event");
    if (event.isErr()) return err(corrupt(source, number, event.error.message, event.error.details["issues"] ?? null));
    events.push(event.value);
    return ok("ok");
  };
  for (const [index, line] of lines.entries()) {
    const accepted = accept(line, index + 1, false);
    if (accepted.isErr()) return err(accepted.error);
  }
  if (tail === "") return ok({ events, torn: null });
  const tailLine = lines.length + 1;
  return accept(tail, tailLine, true).map((state) => ({
    events,
    torn: state === "torn" ? { line: tailLine, bytes: utf8Bytes(tail) } : null,
  }));
}

const readText = ResultAsync.fromThrowable(
  async (file: string, maxBytes: number): Promise<string> => {
    const info = await stat(file);
    if (info.size > maxBytes) {
      throw new KeelError("too_large", `events file ${file} is ${info.size} bytes; at most ${maxBytes} are read`, {
        details: { file, bytes: info.size, maxBytes },
      });
    }
    return readFile(file, "utf8");
  },
  (error) => {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === "ENOENT") return new KeelError("not_found", `events file not found: ${String(error)}`, { cause: error });
    return toKeelError(error, "io_failed", "reading the events file");
  },
);

/**
 * Reads an events JSONL file (as written by {@link createJsonlEventSink}) with
 * {@link parseEventsJsonl}: mid-file damage is `corrupt` with the line number, a torn last line
 * is reported in `torn`. A missing file is `not_found`; one over `maxBytes` is `too_large`.
 *
 * @example
 * ```ts
 * const read = await readEventsJsonl("events.jsonl");
 * if (read.isOk()) {
 *   if (read.value.torn) console.warn(`line ${read.value.torn.line} was torn and left out`);
 *   const analysis = analyzeEvents(read.value.events);
 * }
 * ```
 */
export function readEventsJsonl(file: string, options?: ReadEventsJsonlOptions): ResultAsync<EventsJsonl, KeelError> {
  const checked = validate(ReadArgumentsSchema, options === undefined ? [file] : [file, options], "readEventsJsonl arguments");
  if (checked.isErr()) return errAsync(checked.error);
  const maxBytes = options?.maxBytes ?? DEFAULT_MAX_EVENTS_FILE_BYTES;
  return readText(file, maxBytes).andThen((text) => parseEventsJsonl(text, file));
}
