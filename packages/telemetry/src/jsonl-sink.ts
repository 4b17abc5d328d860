import { resolve } from "node:path";
import { KeelError, utf8Bytes, validateOrThrow } from "@keel/core";
import { err, errAsync, okAsync, type Result, type ResultAsync } from "neverthrow";
import { z } from "zod";
import type { EventSink } from "./event-sink.js";
import { createAppendFile } from "./internal/append-file.js";
import { createBusAttachments } from "./internal/bus-attachments.js";
import { closedError, prepareEvent } from "./internal/prepare-event.js";

/** The default largest line (one event, in UTF-8 bytes) a JSONL sink writes: 1 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

/** Options of {@link createJsonlEventSink}. */
export interface JsonlEventSinkOptions {
  /** The JSONL file; created if missing, appended to if present. Its directory must exist. */
  file: string;
  /**
   * Record content fields (prompts, output, source text) as they are. Default `false`: each is
   * replaced by its digest and byte length (see {@link redactEvent}).
   */
  includeContent?: boolean;
  /** The largest event line in UTF-8 bytes; a larger event is `too_large`. Default 1 MiB. */
  maxEventBytes?: number;
}

/** A JSONL-file {@link EventSink}. */
export interface JsonlEventSink extends EventSink {
  /** The absolute path of the file. */
  readonly file: string;
  /**
   * Bytes of a torn last line (an interrupted write) that were cut off when the file was opened,
   * so that the next event starts on a line of its own; 0 when the file ended cleanly.
   */
  readonly repairedBytes: number;
}

const OptionsSchema = z.strictObject({
  file: z.string().min(1),
  includeContent: z.boolean().optional(),
  maxEventBytes: z.number().int().min(64).optional(),
});

/**
 * Creates a {@link JsonlEventSink}: each event is validated, redacted unless `includeContent`,
 * and appended to the file as one JSON line with one `write` (so concurrent writers never
 * interleave within a line). The file is opened on first use; a torn last line left by an
 * interrupted writer is cut off first, so a new event never lands on a damaged line.
 * `flush()` and `close()` fsync the file (and, for a file it created, its directory).
 * Bad options throw a `KeelError` (`invalid_input`).
 *
 * @example
 * ```ts
 * const sink = createJsonlEventSink({ file: "events.jsonl" });
 * const detach = sink.attach(events);
 * // ... run turns ...
 * detach();
 * await sink.close();
 * const recorded = await readEventsJsonl("events.jsonl");
 * ```
 */
export function createJsonlEventSink(options: JsonlEventSinkOptions): JsonlEventSink {
  const valid = validateOrThrow(OptionsSchema, options, "JSONL event sink options");
  const file = resolve(valid.file);
  const includeContent = valid.includeContent ?? false;
  const maxEventBytes = valid.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  const output = createAppendFile(file);
  const attachments = createBusAttachments();
  let failure: KeelError | undefined;
  let closed = false;

  const appendNow = (event: unknown): Result<void, KeelError> => {
    if (closed) return err(closedError(`the events file sink for ${file}`));
    return prepareEvent(event, includeContent).andThen((prepared) => {
      const line = `${JSON.stringify(prepared)}\n`;
      const bytes = utf8Bytes(line);
      if (bytes > maxEventBytes) {
        return err(
          new KeelError("too_large", `a "${prepared.type}" event is ${bytes} bytes as a line; the sink writes at most ${maxEventBytes}`, {
            details: { type: prepared.type, bytes, maxEventBytes },
          }),
        );
      }
      return output.append(Buffer.from(line, "utf8"));
    });
  };

  const flush = (): ResultAsync<void, KeelError> => {
    const reported = failure;
    failure = undefined;
    const synced = output.sync();
    if (synced.isErr()) return errAsync(synced.error);
    if (!reported) return okAsync(undefined);
    return errAsync(new KeelError(reported.code, `recording an event failed: ${reported.message}`, { details: { file }, cause: reported }));
  };

  return {
    file,
    get repairedBytes() {
      return output.repairedBytes;
    },
    append: (event) => appendNow(event).asyncAndThen(() => okAsync(undefined)),
    attach(bus) {
      return attachments.attach(bus, (event) => {
        const result = appendNow(event);
        if (result.isErr()) failure ??= result.error;
      });
    },
    flush,
    close() {
      attachments.detachAll();
      if (closed) return okAsync(undefined);
      const flushed = flush();
      closed = true;
      const released = output.close();
      return flushed.andThen(() => (released.isErr() ? errAsync(released.error) : okAsync(undefined)));
    },
  };
}
