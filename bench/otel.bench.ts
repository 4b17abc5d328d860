import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createScriptedBackend } from "@keel/backends/scripted";
import { createEventBus, type KeelEvent } from "@keel/core";
import { instrumentKeel, KEEL_OTEL_SCOPE, type KeelInstrumentation } from "@keel/otel";
import { createKeel, type Keel } from "@keel/runtime";
import { createMemoryStore } from "@keel/store";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { okAsync } from "neverthrow";
import { afterAll, bench, describe } from "vitest";

/**
 * What @keel/otel adds to a role turn (issue 34: under 2% of a scripted turn). One scripted turn
 * of the runtime (reserve, backend, capsule, settle, events) three ways, interleaved so a noisy
 * machine favours none: not instrumented; instrumented with no SDK registered (the API's
 * no-op); and instrumented under a host SDK — `traceTurn` around the turn, a BasicTracerProvider
 * with a BatchSpanProcessor to an exporter that takes every batch and drops it, a MeterProvider
 * with a reader, AsyncLocalStorage context. On the memory store (the turn at its cheapest, so the
 * ratio at its worst) and on the filesystem store (the default). Then, apart from the turn's
 * noise, the instrumentation's own work: the events of one runtime turn emitted under
 * `traceTurn` on an instrumented bus, against the same events on a bare bus, many times over.
 */

/** An exporter that takes every batch (counting its spans) and sends nothing. */
class DroppingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}
class IdleReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new DroppingExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
const meterProvider = new MeterProvider({ readers: [new IdleReader()] });

const dirs: string[] = [];
function keelOn(kind: "memory" | "fs"): Keel {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-otel-bench-"));
  dirs.push(dir);
  return createKeel({
    dir,
    cwd: dir,
    ...(kind === "memory" ? { store: createMemoryStore() } : {}),
    backends: [createScriptedBackend({ resumable: true, script: (turn) => `Decision: step ${turn.call} done\nInspected: src/app.ts` })],
    policy: "rolling",
  });
}

interface Variant {
  label: string;
  keel: Keel;
  otel?: KeelInstrumentation;
  traced: boolean;
}

function variants(kind: "memory" | "fs"): Variant[] {
  const plain = keelOn(kind);
  const noop = keelOn(kind);
  const sdk = keelOn(kind);
  return [
    { label: "not instrumented", keel: plain, traced: false },
    // No tracer or meter given: the global providers, which no one registered (the API's no-ops).
    { label: "instrumentKeel, no SDK (no-op)", keel: noop, otel: instrumentKeel(noop), traced: true },
    {
      label: "traceTurn + SDK (batch, metrics)",
      keel: sdk,
      otel: instrumentKeel(sdk, { tracer: tracerProvider.getTracer(KEEL_OTEL_SCOPE), meter: meterProvider.getMeter(KEEL_OTEL_SCOPE), providers: { scripted: "keel.scripted" } }),
      traced: true,
    },
  ];
}

let turnCount = 0;
async function turn(variant: Variant): Promise<void> {
  turnCount += 1;
  // Ten missions in turn, so each one's capsule stays small and every variant sees the same pattern.
  const input = { missionId: `m${turnCount % 10}`, role: "engineer", prompt: `Step ${turnCount} of the plan` };
  const result = variant.traced && variant.otel ? await variant.otel.traceTurn(input, () => variant.keel.runRoleTurn(input)) : await variant.keel.runRoleTurn(input);
  if (result.isErr()) throw result.error;
}

const quantile = (values: number[], q: number): number => [...values].sort((left, right) => left - right)[Math.min(values.length - 1, Math.floor(values.length * q))]!;
const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;

async function interleaved(): Promise<void> {
  const rows: string[] = [];
  for (const [kind, rounds] of [
    ["memory", 1_500],
    ["fs", 300],
  ] as const) {
    const tasks = variants(kind);
    for (let warm = 0; warm < 30; warm++) for (const task of tasks) await turn(task);
    const samples = new Map(tasks.map((task) => [task, [] as number[]]));
    const cpu = new Map(tasks.map((task) => [task, 0]));
    for (let round = 0; round < rounds; round++) {
      // The order rotates each round, so no variant always runs right after another.
      const order = tasks.map((_, index) => tasks[(index + round) % tasks.length]!);
      for (const task of order) {
        const started = performance.now();
        const cpuStarted = process.cpuUsage();
        await turn(task);
        const used = process.cpuUsage(cpuStarted);
        samples.get(task)!.push(performance.now() - started);
        cpu.set(task, cpu.get(task)! + (used.user + used.system) / 1000);
      }
    }
    const base = samples.get(tasks[0]!)!;
    const baseCpu = cpu.get(tasks[0]!)!;
    for (const task of tasks) {
      const values = samples.get(task)!;
      rows.push(
        `  ${kind.padEnd(6)} | ${task.label.padEnd(32)} | median ${quantile(values, 0.5).toFixed(3)} ms (${((quantile(values, 0.5) / quantile(base, 0.5) - 1) * 100).toFixed(1)}%) | ` +
          `mean ${mean(values).toFixed(3)} ms (${((mean(values) / mean(base) - 1) * 100).toFixed(1)}%) | CPU ${(cpu.get(task)! / rounds).toFixed(3)} ms/turn (${((cpu.get(task)! / baseCpu - 1) * 100).toFixed(1)}%)`,
      );
    }
    for (const task of tasks) {
      task.otel?.uninstrument();
      await task.keel.close();
    }
  }
  await tracerProvider.forceFlush();
  console.log(`[otel bench] one scripted role turn, interleaved, after warm-up (% = over not instrumented; ${exporter.spans} spans exported):\n${rows.join("\n")}`);
}
await interleaved();

/** The events one runtime turn emits (its second turn: a resume), recorded from the runtime itself. */
async function oneTurnEvents(): Promise<KeelEvent[]> {
  const keel = keelOn("memory");
  const events: KeelEvent[] = [];
  for (const step of [1, 2]) {
    events.length = 0;
    const off = keel.events.on("*", (event) => events.push(event));
    (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: `Step ${step}` }))._unsafeUnwrap();
    off();
  }
  await keel.close();
  return [...events];
}

async function isolated(): Promise<void> {
  const events = await oneTurnEvents();
  const rounds = 20_000;
  const rows: string[] = [];
  for (const [label, options] of [
    ["no SDK (no-op)", {}],
    ["SDK: spans (batch)", { tracer: tracerProvider.getTracer(KEEL_OTEL_SCOPE) }],
    ["SDK: spans (batch) and metrics", { tracer: tracerProvider.getTracer(KEEL_OTEL_SCOPE), meter: meterProvider.getMeter(KEEL_OTEL_SCOPE) }],
  ] as const) {
    const bare = createEventBus();
    const bus = createEventBus();
    const otel = instrumentKeel(bus, options);
    const input = { missionId: "m1", role: "engineer", prompt: "Step 2" };
    const instrumented = () =>
      otel.traceTurn(input, async () => {
        for (const event of events) bus.emit(event);
        return okAsync({ text: "done" });
      });
    const plain = async () => {
      for (const event of events) bare.emit(event);
      return okAsync({ text: "done" });
    };
    let spent = 0;
    let base = 0;
    for (let round = 0; round < rounds + 2_000; round++) {
      let started = performance.now();
      await instrumented();
      const one = performance.now() - started;
      started = performance.now();
      await plain();
      const other = performance.now() - started;
      if (round >= 2_000) {
        spent += one;
        base += other;
      }
    }
    otel.uninstrument();
    rows.push(`  ${label.padEnd(31)} | ${(((spent - base) / rounds) * 1000).toFixed(1)} µs a turn over the bare bus (${events.length} events: ${[...new Set(events.map((event) => event.type))].join(", ")})`);
  }
  console.log(`[otel bench] the instrumentation's own work for one turn's events, mean of ${rounds} interleaved:\n${rows.join("\n")}`);
}
await isolated();

const quick = variants("memory");
describe("one scripted role turn (memory store)", () => {
  bench("not instrumented", () => turn(quick[0]!));
  bench("traceTurn + SDK (batch, metrics)", () => turn(quick[2]!));
});

afterAll(async () => {
  for (const task of quick) {
    task.otel?.uninstrument();
    await task.keel.close();
  }
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
