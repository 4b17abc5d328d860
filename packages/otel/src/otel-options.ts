import type { EventBus } from "@keel/core";
import type { Meter, Tracer } from "@opentelemetry/api";
import { z } from "zod";

/** Options of {@link instrumentKeel}. */
export interface KeelOtelOptions {
  /**
   * The tracer Keel's spans come from. Default: `trace.getTracer("@keel/otel")`, the host's global
   * tracer provider (a no-op until the host registers an SDK).
   */
  tracer?: Tracer;
  /**
   * The meter Keel's metrics come from (`gen_ai.client.token.usage`,
   * `gen_ai.client.operation.duration`, `keel.budget.remaining`, `keel.work_session.tool_calls`,
   * `keel.work_session.active_minutes`). Default: `metrics.getMeter("@keel/otel")`, the host's
   * global meter provider (a no-op until the host registers one).
   */
  meter?: Meter;
  /**
   * Record text on spans: the prompt and answer of a {@link KeelInstrumentation.traceTurn} turn
   * (as `gen_ai.input.messages` / `gen_ai.output.messages`), warning and error messages, audit
   * notes. Default `false`: no text at all, only sizes, codes and ids.
   */
  captureContent?: boolean;
  /**
   * `gen_ai.provider.name` per Keel backend id (`{ "claude-code": "anthropic", codex: "openai" }`).
   * A backend not listed gets no provider attribute (only `keel.backend`).
   */
  providers?: Record<string, string>;
  /**
   * How long (ms) a turn span built from events alone (no `traceTurn`) stays open after its
   * `role.session.turn` for the turn's later events (`agent.io.*`, `work.session.turn`), which
   * end it sooner. Its end time is the turn's end either way. Default 2000.
   */
  turnSettleMs?: number;
}

/** What {@link instrumentKeel} instruments: an event bus, or anything with one (a `Keel`). */
export type KeelEventSource = EventBus | { readonly events: EventBus };

const isBus = (value: unknown): value is EventBus =>
  typeof value === "object" && value !== null && typeof (value as { on?: unknown }).on === "function";

/** zod schema of {@link KeelEventSource}. */
export const KeelEventSourceSchema = z.custom<KeelEventSource>(
  (value) => isBus(value) || (typeof value === "object" && value !== null && isBus((value as { events?: unknown }).events)),
  { message: "expected a Keel event bus (createEventBus()) or an object with one as `events` (a Keel)" },
);

/** zod schema of {@link KeelOtelOptions}. */
export const KeelOtelOptionsSchema = z.strictObject({
  tracer: z
    .custom<Tracer>((value) => typeof value === "object" && value !== null && typeof (value as { startSpan?: unknown }).startSpan === "function", {
      message: "expected an OpenTelemetry Tracer (with startSpan)",
    })
    .optional(),
  meter: z
    .custom<Meter>((value) => typeof value === "object" && value !== null && typeof (value as { createHistogram?: unknown }).createHistogram === "function", {
      message: "expected an OpenTelemetry Meter (with createHistogram)",
    })
    .optional(),
  captureContent: z.boolean().optional(),
  providers: z.record(z.string().min(1), z.string().min(1)).optional(),
  turnSettleMs: z.number().int().min(0).max(600_000).optional(),
});

/** The turn {@link KeelInstrumentation.traceTurn} wraps: the runtime's turn input, read loosely. */
export interface TracedTurn {
  /** The role (the span's `gen_ai.agent.name`). */
  role: string;
  /** The mission, when known. */
  missionId?: string;
  /** The task, when known. */
  taskId?: string;
  /** The prompt; on the span only with `captureContent`. */
  prompt?: string;
}

/** zod schema of {@link TracedTurn}; other fields of the runtime's turn input are ignored. */
export const TracedTurnSchema = z.looseObject({
  role: z.string().min(1),
  missionId: z.string().min(1).optional(),
  taskId: z.string().min(1).optional(),
  prompt: z.string().optional(),
});
