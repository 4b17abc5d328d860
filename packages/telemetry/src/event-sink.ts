import type { EventBase, EventBus, KeelError, Unsubscribe } from "@keel/core";
import type { ResultAsync } from "neverthrow";

/**
 * Something that records Keel events: the store-backed log of {@link createEventLog} and the
 * JSONL file of {@link createJsonlEventSink}. Content fields are redacted unless the sink was
 * created with `includeContent: true` (see {@link redactEvent}).
 */
export interface EventSink {
  /**
   * Records one event — a catalogue event or a host's custom one (any plain JSON object with
   * `type` and `at`). Bad input is `invalid_input` and records nothing.
   */
  append<E extends EventBase<string>>(event: E): ResultAsync<void, KeelError>;
  /**
   * Records every event the bus emits from now on (`'*'`). Returns the unsubscribe function;
   * calling it twice is harmless. Failures cannot reach the emitter: they are kept and
   * reported by the next {@link EventSink.flush}.
   */
  attach(bus: EventBus): Unsubscribe;
  /**
   * Waits until every event accepted so far is durably recorded. Reports the first failure
   * since the previous flush (events that failed to be recorded are named in its `details`).
   */
  flush(): ResultAsync<void, KeelError>;
  /** Detaches from every bus, flushes and releases the sink. Later appends are `invalid_input`. */
  close(): ResultAsync<void, KeelError>;
}
