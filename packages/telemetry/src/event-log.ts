import { KeelError, toKeelError, validate, validateOrThrow, type JsonValue, type KeelEvent } from "@keel/core";
import { type KeelStore, type Key, type LogRecordInput } from "@keel/store";
import { keelStoreSchema, validateKey } from "@keel/store/kit";
import { err, errAsync, okAsync, ResultAsync, type Result } from "neverthrow";
import { z } from "zod";
import { KeelEventSchema } from "./event-schema.js";
import type { EventSink } from "./event-sink.js";
import { createBusAttachments } from "./internal/bus-attachments.js";
import { createEventIdAssigner } from "./internal/event-ids.js";
import { closedError, prepareEvent } from "./internal/prepare-event.js";
import { createRecordQueue, type QueuedRecord, type RecordOwner } from "./internal/record-queue.js";

/** The log an {@link EventLog} writes when none is given: `["telemetry", "events"]`. */
export const DEFAULT_EVENT_LOG_KEY: readonly string[] = ["telemetry", "events"];

/** Options of {@link createEventLog}. */
export interface EventLogOptions {
  /** Where the events go: only the store's `logs` port is used. */
  store: Pick<KeelStore, "logs">;
  /** The log key (safe-name segments). Default {@link DEFAULT_EVENT_LOG_KEY}. */
  log?: Key;
  /**
   * Record content fields (prompts, output, source text) as they are. Default `false`: each is
   * replaced by its digest and byte length (see {@link redactEvent}).
   */
  includeContent?: boolean;
  /** The most events written in one `append` call to the store. Default 100. */
  batchSize?: number;
}

/** A store-backed {@link EventSink} that can read its events back. */
export interface EventLog extends EventSink {
  /** The log key the events are appended to. */
  readonly log: readonly string[];
  /** Reads every recorded event, in the order the store appended them. Damaged records are `corrupt`. */
  read(): ResultAsync<KeelEvent[], KeelError>;
}

const OptionsSchema = z.strictObject({
  store: keelStoreSchema(["logs"]),
  log: z.array(z.string()).optional(),
  includeContent: z.boolean().optional(),
  batchSize: z.number().int().min(1).max(1000).optional(),
});

const READ_PAGE = 500;

/**
 * Creates an {@link EventLog}: every event it is given (or that an attached bus emits) is
 * validated, redacted unless `includeContent`, and appended to a `LogStore` log under an
 * idempotent id, in arrival order, in batches. A retried append of the same event object is
 * deduplicated by the store; re-importing the same event sequence into a new log instance is a
 * no-op. Events from a bus that fail to be written stay queued and are retried by the next event
 * or {@link EventSink.flush}; events that can never be written (`too_large`) are dropped and
 * reported by `flush`. Bad options throw a `KeelError` (`invalid_input`).
 *
 * @example
 * ```ts
 * const events = createEventBus();
 * const eventLog = createEventLog({ store: createMemoryStore() });
 * const detach = eventLog.attach(events);
 * events.emit({ type: "agent.io.read", role: "engineer", missionId: "m1", path: "src/a.ts", bytes: 120, skill: null });
 * await eventLog.flush();
 * const recorded = await eventLog.read(); // ok([...one event])
 * detach();
 * ```
 */
export function createEventLog(options: EventLogOptions): EventLog {
  const valid = validateOrThrow(OptionsSchema, options, "event log options");
  const logKey = valid.log === undefined ? [...DEFAULT_EVENT_LOG_KEY] : validateKeyOrThrow(valid.log);
  const logs = valid.store.logs;
  const includeContent = valid.includeContent ?? false;
  const ids = createEventIdAssigner();
  const attachments = createBusAttachments();
  let closed = false;

  const appendSafely = ResultAsync.fromThrowable(
    async (records: LogRecordInput[]) => await logs.append(logKey, records),
    (error) => toKeelError(error, "io_failed", "appending events to the log"),
  );
  const queue = createRecordQueue((records) => appendSafely(records).andThen((result) => result), {
    batchSize: valid.batchSize ?? 100,
    location: logKey.join("/"),
  });

  const enqueue = (event: unknown, owner: RecordOwner): Result<QueuedRecord, KeelError> => {
    if (closed) return err(closedError("this event log"));
    return prepareEvent(event, includeContent).map((prepared) => {
      const original = typeof event === "object" && event !== null ? event : {};
      return queue.push(ids.idOf(original, prepared), prepared as unknown as JsonValue, owner);
    });
  };

  return {
    log: logKey,
    append(event) {
      return enqueue(event, "caller").asyncAndThen((entry) => queue.waitFor(entry));
    },
    attach(bus) {
      return attachments.attach(bus, (event) => {
        const queued = enqueue(event, "bus");
        if (queued.isErr()) queue.fail(queued.error);
      });
    },
    flush: () => queue.flush(),
    close() {
      attachments.detachAll();
      const result = queue.flush();
      closed = true;
      return result;
    },
    read() {
      return readAll(logs, logKey);
    },
  };
}

function validateKeyOrThrow(key: readonly string[]): string[] {
  const result = validateKey(key, "event log key");
  if (result.isErr()) throw result.error;
  return result.value;
}

function readAll(logs: KeelStore["logs"], logKey: string[]): ResultAsync<KeelEvent[], KeelError> {
  const readSafely = ResultAsync.fromThrowable(
    async (afterSeq: number) => await logs.read(logKey, { afterSeq, limit: READ_PAGE }),
    (error) => toKeelError(error, "io_failed", "reading the event log"),
  );
  const collect = (afterSeq: number, events: KeelEvent[]): ResultAsync<KeelEvent[], KeelError> =>
    readSafely(afterSeq)
      .andThen((result) => result)
      .andThen((records) => {
        for (const record of records) {
          const checked = validate(KeelEventSchema, record.value, "recorded event");
          if (checked.isErr()) {
            return errAsync(
              new KeelError("corrupt", `event log ${logKey.join("/")} record ${record.seq} is not an event: ${checked.error.message}`, {
                details: { location: `${logKey.join("/")}#${record.seq}`, issues: checked.error.details["issues"] ?? null },
              }),
            );
          }
          events.push(checked.value);
        }
        const last = records.at(-1);
        return records.length < READ_PAGE || !last ? okAsync(events) : collect(last.seq, events);
      });
  return collect(0, []);
}
