import { createScriptedBackend } from "@keel/backends/scripted";
import { createEventBus, KeelError } from "@keel/core";
import { createKeel } from "@keel/runtime";
import { useTempDirs } from "@keel/testkit";
import { context, metrics } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { errAsync } from "neverthrow";
import { describe, expect, it } from "vitest";
import { instrumentKeel, KEEL_OTEL_SCOPE } from "./index.js";

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const dirs = useTempDirs("keel-otel-metrics-");
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] }).getTracer(KEEL_OTEL_SCOPE);

/** A reader the test collects from on demand (the SDK's own MetricReader, no export). */
class CollectingReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

async function collect(reader: MetricReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const found = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics) {
    expect(scope.scope.name).toBe(KEEL_OTEL_SCOPE);
    for (const metric of scope.metrics) found.set(metric.descriptor.name, metric);
  }
  return found;
}

const histogramPoints = (metric: MetricData | undefined): DataPoint<Histogram>[] => (metric?.dataPoints ?? []) as DataPoint<Histogram>[];

function meterAndReader(): { meter: ReturnType<MeterProvider["getMeter"]>; reader: CollectingReader } {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  return { meter: provider.getMeter(KEEL_OTEL_SCOPE), reader };
}

describe("metrics", () => {
  it("records token usage by gen_ai.token.type and turn durations of the runtime's turns", async () => {
    const { meter, reader } = meterAndReader();
    const dir = dirs.dir();
    const keel = dirs.track(createKeel({ dir, cwd: dir, backends: [createScriptedBackend({ resumable: true, script: (turn) => `Decision: step ${turn.call}` })], policy: "rolling" }));
    const otel = instrumentKeel(keel, { tracer, meter, providers: { scripted: "keel.scripted" } });
    const reported: { input: number; output: number }[] = [];
    keel.events.on("role.session.turn", (event) => {
      reported.push({ input: (event.usage?.inputUncached ?? 0) + (event.usage?.cacheRead ?? 0) + (event.usage?.cacheWrite ?? 0), output: event.usage?.output ?? 0 });
    });
    for (const step of [1, 2, 3]) {
      const input = { missionId: "m1", role: "engineer", prompt: `Step ${step}` };
      expect((await otel.traceTurn(input, () => keel.runRoleTurn(input))).isOk()).toBe(true);
    }
    otel.uninstrument();

    const found = await collect(reader);
    const usage = found.get("gen_ai.client.token.usage");
    expect(usage?.descriptor.unit).toBe("{token}");
    const byType = new Map(histogramPoints(usage).map((point) => [point.attributes["gen_ai.token.type"], point]));
    expect([...byType.keys()].sort()).toEqual(["input", "output"]);
    for (const point of byType.values()) {
      expect(point.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "engineer", "gen_ai.provider.name": "keel.scripted", "keel.session.policy": "rolling" });
      expect(point.attributes).not.toHaveProperty("keel.mission.id");
      expect(point.value.count).toBe(3);
    }
    expect(reported).toHaveLength(3);
    expect(reported.every((turn) => turn.input > 0 && turn.output > 0)).toBe(true);
    expect(byType.get("input")!.value.sum).toBe(reported.reduce((sum, turn) => sum + turn.input, 0));
    expect(byType.get("output")!.value.sum).toBe(reported.reduce((sum, turn) => sum + turn.output, 0));

    const duration = found.get("gen_ai.client.operation.duration");
    expect(duration?.descriptor.unit).toBe("s");
    const [turns] = histogramPoints(duration);
    expect(turns!.value.count).toBe(3);
    expect(turns!.attributes).not.toHaveProperty("error.type");
  });

  it("records a failed and a refused turn's duration with its error.type", async () => {
    const { meter, reader } = meterAndReader();
    const otel = instrumentKeel(createEventBus(), { tracer, meter });
    await otel.traceTurn({ role: "engineer" }, () => errAsync(new KeelError("backend_failed", "exit 1")));
    await otel.traceTurn({ role: "engineer" }, () => errAsync(new KeelError("budget_exceeded", "over")));
    otel.uninstrument();
    const points = histogramPoints((await collect(reader)).get("gen_ai.client.operation.duration"));
    expect(points.map((point) => point.attributes["error.type"]).sort()).toEqual(["backend_failed", "budget_exceeded"]);
    expect(points.every((point) => point.value.count === 1)).toBe(true);
  });

  it("records budget remaining per scope, work-session tool calls and active minutes", async () => {
    const { meter, reader } = meterAndReader();
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer, meter });
    bus.emit({ type: "budget.threshold", scope: "role.engineer", dimensions: ["tokens"], amounts: { tokens: 8_000 }, limitingScope: "mission.m1", details: { percent: 80, used: 8_000, limit: 10_000, level: "hard" } });
    bus.emit({
      type: "budget.refused",
      scope: "role.engineer",
      dimensions: ["calls"],
      amounts: { calls: 1 },
      limitingScope: "mission.m1",
      details: { dimension: "calls", asked: 1, remaining: 0, limit: 4, violations: [{ scope: "team.core", dimension: "tokens", asked: 900, remaining: 120, limit: 50_000 }] },
    });
    for (const toolCalls of [3, null, 4]) {
      bus.emit({ type: "work.session.turn", missionId: "m1", role: "engineer", sessionId: "ws1", model: null, usage: null, tokens: null, toolCalls, modelPin: null, wallMs: 10, taskId: null });
    }
    bus.emit({ type: "work.session.closed", missionId: "m1", role: "engineer", sessionId: "ws1", model: null, turns: 3, tasks: 1, tokens: null, toolCalls: 7, turnsWithoutToolCalls: 1, activeMinutes: 12, openedAt: 1, closedAt: 2 });
    otel.uninstrument();

    const found = await collect(reader);
    const remaining = (found.get("keel.budget.remaining")?.dataPoints ?? []).map((point) => [point.attributes["keel.budget.scope"], point.attributes["keel.budget.dimension"], point.value]);
    expect(remaining).toEqual(
      expect.arrayContaining([
        ["mission.m1", "tokens", 2_000],
        ["mission.m1", "calls", 0],
        ["team.core", "tokens", 120],
      ]),
    );
    expect(remaining).toHaveLength(3);
    const calls = found.get("keel.work_session.tool_calls")?.dataPoints ?? [];
    expect(calls.map((point) => [point.attributes["gen_ai.agent.name"], point.value])).toEqual([["engineer", 7]]);
    const [minutes] = histogramPoints(found.get("keel.work_session.active_minutes"));
    expect([minutes!.value.count, minutes!.value.sum]).toEqual([1, 12]);
  });

  it("uses the global meter provider by default, a no-op until the host registers one", async () => {
    const bus = createEventBus();
    const idle = instrumentKeel(bus, { tracer });
    bus.emit({ type: "work.session.turn", missionId: "m1", role: "engineer", sessionId: null, model: null, usage: null, tokens: null, toolCalls: 2, modelPin: null, wallMs: 1, taskId: null });
    idle.uninstrument();

    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    expect(metrics.setGlobalMeterProvider(provider)).toBe(true);
    try {
      const otel = instrumentKeel(bus, { tracer });
      bus.emit({ type: "work.session.turn", missionId: "m1", role: "engineer", sessionId: null, model: null, usage: null, tokens: null, toolCalls: 5, modelPin: null, wallMs: 1, taskId: null });
      otel.uninstrument();
      // Only what was recorded after the host registered its provider.
      expect((await collect(reader)).get("keel.work_session.tool_calls")?.dataPoints.map((point) => point.value)).toEqual([5]);
    } finally {
      metrics.disable();
    }
  });

  it("refuses a meter that is not one", () => {
    let code: string | undefined;
    try {
      instrumentKeel(createEventBus(), { meter: {} as never });
    } catch (error) {
      code = KeelError.is(error) ? error.code : "not a KeelError";
    }
    expect(code).toBe("invalid_input");
  });
});
