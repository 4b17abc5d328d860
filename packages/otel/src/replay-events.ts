import { createEventBus, validateOrThrow, type KeelEvent } from "@keel/core";
import { createNoopMeter, type Meter, type Tracer } from "@opentelemetry/api";
import { z } from "zod";
import { createInstrumentation } from "./instrument-keel.js";

/** Options of {@link replayEvents}. */
export interface ReplayOptions {
  /** The tracer the spans come from. Default: `trace.getTracer("@keel/otel")` (the global provider's). */
  tracer?: Tracer;
  /**
   * The meter to record the log's metrics on. Default: none (a no-op meter): a metric point is
   * stamped with the time it is recorded, not the event's, so a replay's metrics would all land
   * now.
   */
  meter?: Meter;
  /** Record the text a log holds (warning messages, audit notes), as `instrumentKeel`'s option. Default `false`. */
  captureContent?: boolean;
  /** `gen_ai.provider.name` per backend id, as `instrumentKeel`'s option. */
  providers?: Record<string, string>;
}

/** What {@link replayEvents} did. */
export interface ReplaySummary {
  /** Events replayed. */
  events: number;
  /** Role turns among them (`role.session.turn`). */
  turns: number;
}

const EventsSchema = z.array(z.looseObject({ type: z.string().min(1), at: z.number().finite() }));
const ReplayOptionsSchema = z.strictObject({
  tracer: z.unknown().optional(),
  meter: z.unknown().optional(),
  captureContent: z.boolean().optional(),
  providers: z.unknown().optional(),
});

/**
 * Events a runtime turn emits before its `role.session.turn` (the reservation and the threshold
 * it crossed, the skill view, the work session opened): replayed right after it, so they land on
 * its span.
 */
const BEFORE_TURN = new Set(["budget.reserved", "budget.threshold", "skill.library.available", "work.session.opened"]);

/**
 * The events in replay order: the events a turn emits before its `role.session.turn`
 * (reservation, skill view, work session opened) moved just after it, so that they are recorded
 * on the turn's span. Held events that meet anything else first (a refusal, a failure, the
 * turn's later events) are put back where they were, before it.
 */
function replayOrder(events: readonly KeelEvent[]): KeelEvent[] {
  const ordered: KeelEvent[] = [];
  let held: KeelEvent[] = [];
  for (const event of events) {
    if (BEFORE_TURN.has(event.type)) {
      held.push(event);
      continue;
    }
    if (event.type === "role.session.turn") {
      ordered.push(event, ...held);
    } else {
      ordered.push(...held, event);
    }
    held = [];
  }
  ordered.push(...held);
  return ordered;
}

/**
 * Replays a recorded event log (`readEventsJsonl` of `@keel/telemetry`, a JSONL sink's file) as
 * the spans {@link instrumentKeel} would have made while it ran, with the events' own times:
 * each role turn an `invoke_agent {role}` span from `at − wallMs` to `at`, its file accesses
 * `execute_tool` children, its budget reservation and settlement events on it, workflow runs
 * and stages, closed work sessions; a refusal or failure that no turn holds (`budget.refused`,
 * `work.session.refused`, `backend.turn.failed`) a zero-length span with an ERROR status and
 * its code as `error.type`. Spans parent to the active span (a root when there is none).
 * Synchronous; the host's span processor exports them (call its `forceFlush()`). Bad arguments
 * throw `invalid_input`.
 *
 * @example
 * ```ts
 * const read = await readEventsJsonl("events.jsonl");
 * if (read.isOk()) replayEvents(read.value.events, { tracer: provider.getTracer("@keel/otel") });
 * await provider.forceFlush();
 * ```
 */
export function replayEvents(events: readonly KeelEvent[], options: ReplayOptions = {}): ReplaySummary {
  validateOrThrow(EventsSchema, events, "events of replayEvents");
  validateOrThrow(ReplayOptionsSchema, options, "options of replayEvents");
  const bus = createEventBus();
  const instrumentation = createInstrumentation(
    bus,
    {
      ...(options.tracer !== undefined ? { tracer: options.tracer } : {}),
      meter: options.meter ?? createNoopMeter(),
      ...(options.captureContent !== undefined ? { captureContent: options.captureContent } : {}),
      ...(options.providers !== undefined ? { providers: options.providers } : {}),
      // Nothing waits in a replay: an event-built turn ends at its next turn or at the end.
      turnSettleMs: 600_000,
    },
    { replay: true },
  );
  let turns = 0;
  try {
    for (const event of replayOrder(events)) {
      if (event.type === "role.session.turn") turns += 1;
      bus.emit(event);
    }
  } finally {
    instrumentation.uninstrument();
  }
  return { events: events.length, turns };
}
