/**
 * Keel in a host's OpenTelemetry setup, offline: the host registers the SDK (here an in-memory
 * span exporter and a metric reader; in production an OTLP exporter to a collector, Jaeger or
 * Langfuse), instruments Keel once, and runs each role turn inside its request's span. Returns
 * the trace as an indented tree and the token usage the metrics recorded.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedBackend } from "@keel/backends/scripted";
import { instrumentKeel, KEEL_OTEL_SCOPE } from "@keel/otel";
import { createKeel } from "@keel/runtime";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";

/** A metric reader the program collects from when it wants (a PeriodicExportingMetricReader in production). */
class OnDemandReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** What one run shows: the span tree, one line a span, and the input/output tokens recorded. */
export interface TraceRun {
  tree: string[];
  tokens: { input: number; output: number };
}

/** Runs two turns of an engineer (the second one resumed) inside a host span, and a third refused by the budget. */
export async function runTracedTurns(): Promise<TraceRun> {
  // The host's SDK: a context manager (without one no span nests), a tracer and a meter provider.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });

  const dir = mkdtempSync(join(tmpdir(), "keel-otel-example-"));
  const keel = createKeel({
    dir,
    cwd: dir,
    backends: [createScriptedBackend({ resumable: true, script: (turn) => `Decision: step ${turn.call} done\nInspected: src/app.ts` })],
    policy: "rolling",
    budget: { mission: { calls: 2 } },
  });
  const otel = instrumentKeel(keel, {
    tracer: tracerProvider.getTracer(KEEL_OTEL_SCOPE),
    meter: meterProvider.getMeter(KEEL_OTEL_SCOPE),
    providers: { scripted: "keel.scripted" },
  });

  // The host's own span (an HTTP request, a job): Keel's turn spans become its children.
  await tracerProvider.getTracer("my-app").startActiveSpan("handle request", async (request) => {
    for (const step of [1, 2, 3]) {
      const input = { missionId: "m1", role: "engineer", prompt: `Step ${step} of the plan` };
      await otel.traceTurn(input, () => keel.runRoleTurn(input));
    }
    request.end();
  });
  otel.uninstrument();
  await keel.close();

  const finished = spans.getFinishedSpans();
  const tree: string[] = [];
  const print = (span: ReadableSpan, depth: number): void => {
    const facts = [span.attributes["keel.session.action"], span.attributes["keel.io.path"], span.attributes["error.type"]].filter((fact) => fact !== undefined);
    tree.push(`${"  ".repeat(depth)}${span.name}${facts.length > 0 ? ` ${facts.join(" ")}` : ""}`);
    for (const child of finished.filter((other) => other.parentSpanContext?.spanId === span.spanContext().spanId)) print(child, depth + 1);
  };
  for (const root of finished.filter((span) => span.parentSpanContext === undefined)) print(root, 0);

  const { resourceMetrics } = await reader.collect();
  const usage = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === "gen_ai.client.token.usage");
  const tokens = { input: 0, output: 0 };
  for (const point of (usage?.dataPoints ?? []) as DataPoint<Histogram>[]) tokens[point.attributes["gen_ai.token.type"] === "input" ? "input" : "output"] += point.value.sum ?? 0;

  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  context.disable();
  return { tree, tokens };
}

// Run directly: print the trace tree.
if (import.meta.url === `file://${process.argv[1]}`) {
  const run = await runTracedTurns();
  console.log(run.tree.join("\n"));
  console.log(`tokens: ${run.tokens.input} in, ${run.tokens.output} out`);
}
