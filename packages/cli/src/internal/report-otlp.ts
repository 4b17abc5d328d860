import type { KeelEvent } from "@keel/core";
import { KeelError } from "@keel/core";
import { KEEL_OTEL_SCOPE, replayEvents } from "@keel/otel";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";

/** What {@link shipEvents} sent. */
export interface ShipReport {
  /** Where the spans went. */
  url: string;
  /** Spans the receiver took. */
  spans: number;
  /** Events replayed, and role turns among them. */
  events: number;
  turns: number;
}

/** How many spans go in one OTLP request. */
const BATCH = 512;

/**
 * Replays `events` as spans (`replayEvents` of `@keel/otel`, with the events' own times) and
 * sends them to the OTLP/HTTP (JSON) receiver at `url`, `batch` spans a request, waiting for
 * each answer. The resource's `service.name` is `serviceName`. Headers come from the
 * exporter's usual environment variables (`OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_EXPORTER_OTLP_TRACES_HEADERS`). A receiver that refuses or cannot be reached within
 * `timeoutMs` is `unavailable`.
 */
export async function shipEvents(events: readonly KeelEvent[], options: { url: string; serviceName: string; timeoutMs: number }): Promise<ShipReport> {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const summary = replayEvents(events, { tracer: provider.getTracer(KEEL_OTEL_SCOPE) });
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  const exporter = new OTLPTraceExporter({ url: options.url, timeoutMillis: options.timeoutMs });
  let sent = 0;
  try {
    for (let start = 0; start < spans.length; start += BATCH) {
      const batch = spans.slice(start, start + BATCH);
      await exportBatch(exporter, batch, options.url);
      sent += batch.length;
    }
  } finally {
    await exporter.shutdown().catch(() => undefined);
    await provider.shutdown().catch(() => undefined);
  }
  return { url: options.url, spans: sent, events: summary.events, turns: summary.turns };
}

function exportBatch(exporter: OTLPTraceExporter, batch: ReadableSpan[], url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    exporter.export(batch, (result) => {
      // ExportResultCode.SUCCESS is 0 (@opentelemetry/core), not imported for one number.
      if (result.code === 0) return resolve();
      const reason = result.error?.message ?? "the export failed";
      reject(new KeelError("unavailable", `the OTLP receiver at ${url} did not take the spans: ${reason}`, { retryable: true, details: { url } }));
    });
  });
}
