/**
 * What a hostile or careless caller can hand `@keel/otel`'s exports: values whose very reading is
 * hostile (a proxy whose reads throw, an array proxy whose items throw, a throwing getter, cycles,
 * a huge array, a revoked proxy) in every argument. `instrumentKeel`, `traceTurn` and
 * `replayEvents` are plain-value APIs whose contract is to throw `invalid_input` (a `KeelError`)
 * for bad arguments: each does, never a TypeError, and a refused call leaves no span behind.
 */
import { createEventBus } from "@keel/core";
import { instrumentKeel, replayEvents } from "@keel/otel";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expectThrowsKeel, hostileStructures, hostileValue } from "./support/hostile.js";

function tracing(): { tracer: ReturnType<BasicTracerProvider["getTracer"]>; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer("otel-hostile"), exporter };
}

describe("@keel/otel given values whose reading is hostile", () => {
  it("instrumentKeel, traceTurn and replayEvents throw invalid_input, never a TypeError, and leave no span", () => {
    const { tracer, exporter } = tracing();
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer });
    const turn = { missionId: "m1", role: "engineer", prompt: "p" };
    expect(otel.traceTurn(turn, () => 7)).toBe(7);
    exporter.reset();
    const thrown: [string, (value: unknown) => unknown][] = [
      ["instrumentKeel(value)", (value) => instrumentKeel(value as never)],
      ["instrumentKeel(bus, value)", (value) => instrumentKeel(bus, value as never)],
      ["instrumentKeel(bus, { tracer: value })", (value) => instrumentKeel(bus, { tracer: value as never })],
      ["traceTurn(value, run)", (value) => otel.traceTurn(value as never, () => 1)],
      ["traceTurn(turn, value)", (value) => otel.traceTurn(turn, value as never)],
      ["replayEvents(value)", (value) => replayEvents(value as never, { tracer })],
      ["replayEvents([value])", (value) => replayEvents([value] as never, { tracer })],
      ["replayEvents([], value)", (value) => replayEvents([], value as never)],
    ];
    for (const [label, value] of hostileStructures()) {
      for (const [name, call] of thrown) {
        try {
          expectThrowsKeel(() => call(value));
        } catch (failure) {
          throw new Error(`${name} with ${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
        }
      }
    }
    otel.uninstrument();
    otel.uninstrument();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("traceTurn's turn and replayEvents' events of the wrong type throw invalid_input (the class, not one example)", () => {
    const { tracer, exporter } = tracing();
    const otel = instrumentKeel(createEventBus(), { tracer });
    fc.assert(
      fc.property(hostileValue, (value) => {
        // A turn is an object with a role; events an array of events: no hostile value is either.
        expectThrowsKeel(() => otel.traceTurn(value as never, () => 1));
        if (!(Array.isArray(value) && value.length === 0)) expectThrowsKeel(() => replayEvents(value as never, { tracer }));
      }),
      { numRuns: 100 },
    );
    otel.uninstrument();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
