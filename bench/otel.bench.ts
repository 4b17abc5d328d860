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
 * of the runtime (reserve, backend, capsule, settle, events) three ways: not instrumented;
 * instrumented with no SDK registered (the API's no-op); and instrumented under a host SDK —
 * `traceTurn` around the turn, a BasicTracerProvider with a BatchSpanProcessor to an exporter
 * that takes every batch and drops it, a MeterProvider with a reader, AsyncLocalStorage context.
 * On the memory store (the turn at its cheapest, so the ratio at its worst) and on the filesystem
 * store (the default).
 *
 * The machine is shared and noisy, so the variants take turns one turn at a time, the order
 * rotating each round, thousands of rounds after a warm-up; the figure read is the ratio of a
 * variant's median turn to the uninstrumented one's (wall and CPU), with its smallest and largest
 * over five chunks of the run, beside a second uninstrumented Keel as the control: its ratio is
 * what noise alone gives. (Blocks of turns timed together, paired by round, gave a control spread
 * over ±30%: a major GC lands in one block.) Then, apart from the turn's own noise, the
 * instrumentation's own work: the events of one runtime turn emitted under `traceTurn` on an
 * instrumented bus against the same events on a bare bus, in alternating blocks, as µs and as a
 * share of the median memory-store turn (a lower bound: in a real turn the same code runs colder).
 *
 * Run: `pnpm vitest bench --run --project bench bench/otel.bench.ts` (about a minute); the
 * `[otel bench]` lines are the figures. The vitest table at the end (tinybench, one variant after
 * the other) is a sanity check, too noisy on a shared machine to read a 2% difference from.
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
  const control = keelOn(kind);
  return [
    { label: "not instrumented", keel: plain, traced: false },
    { label: "not instrumented (control)", keel: control, traced: false },
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
const percent = (ratio: number): string => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)}%`;
/** The ratio of the medians over the whole run, and its smallest and largest over the run's chunks. */
const ratioRange = (whole: number, chunks: number[]): string => `${percent(whole)} [${percent(Math.min(...chunks))} … ${percent(Math.max(...chunks))}]`;

/** The median memory-store turn, uninstrumented (ms): what the isolated figures are a share of. */
let memoryTurnMs = Number.NaN;

async function interleaved(): Promise<void> {
  const rows: string[] = [];
  const chunks = 5;
  for (const [kind, rounds, warmUp] of [
    ["memory", 2_500, 300],
    ["fs", 400, 40],
  ] as const) {
    const tasks = variants(kind);
    for (let warm = 0; warm < warmUp; warm++) for (const task of tasks) await turn(task);
    const wall = new Map(tasks.map((task) => [task, [] as number[]]));
    const cpu = new Map(tasks.map((task) => [task, [] as number[]]));
    for (let round = 0; round < rounds; round++) {
      // One turn of each variant a round, the order rotating each round, so no variant always
      // runs right after another.
      for (let index = 0; index < tasks.length; index++) {
        const task = tasks[(index + round) % tasks.length]!;
        const cpuStarted = process.cpuUsage();
        const started = performance.now();
        await turn(task);
        const took = performance.now() - started;
        const used = process.cpuUsage(cpuStarted);
        wall.get(task)!.push(took);
        cpu.get(task)!.push((used.user + used.system) / 1000);
      }
    }
    const base = tasks[0]!;
    if (kind === "memory") memoryTurnMs = quantile(wall.get(base)!, 0.5);
    /** The ratio of a variant's median to the baseline's, over all rounds and over each chunk of them. */
    const ratios = (values: Map<Variant, number[]>, task: Variant): string => {
      const of = (from: number, to: number) => quantile(values.get(task)!.slice(from, to), 0.5) / quantile(values.get(base)!.slice(from, to), 0.5);
      const size = Math.floor(rounds / chunks);
      return ratioRange(
        of(0, rounds),
        Array.from({ length: chunks }, (_, chunk) => of(chunk * size, (chunk + 1) * size)),
      );
    };
    for (const task of tasks) {
      rows.push(
        `  ${kind.padEnd(6)} | ${task.label.padEnd(32)} | ${quantile(wall.get(task)!, 0.5).toFixed(3)} ms` +
          (task === base ? "" : ` | wall ${ratios(wall, task)} | CPU ${ratios(cpu, task)}`),
      );
    }
    for (const task of tasks) {
      task.otel?.uninstrument();
      await task.keel.close();
    }
  }
  await tracerProvider.forceFlush();
  console.log(
    `[otel bench] one scripted role turn (${exporter.spans} spans exported): the median turn, and over not instrumented the ratio of the ` +
      `medians [smallest … largest over ${chunks} chunks of the run]; the second uninstrumented Keel is the control (its ratio is noise):\n${rows.join("\n")}`,
  );
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
  const rounds = 40;
  const block = 500;
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
    const time = async (run: () => Promise<unknown>): Promise<number> => {
      const started = performance.now();
      for (let one = 0; one < block; one++) await run();
      return ((performance.now() - started) / block) * 1000;
    };
    for (let warm = 0; warm < 4; warm++) {
      await time(instrumented);
      await time(plain);
    }
    const extra: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternating which block goes first, so neither always runs on a warmer machine.
      const first = round % 2 === 0 ? await time(instrumented) : await time(plain);
      const second = round % 2 === 0 ? await time(plain) : await time(instrumented);
      extra.push(round % 2 === 0 ? first - second : second - first);
    }
    otel.uninstrument();
    const median = quantile(extra, 0.5);
    rows.push(
      `  ${label.padEnd(31)} | ${median.toFixed(1)} µs a turn [${quantile(extra, 0.25).toFixed(1)} … ${quantile(extra, 0.75).toFixed(1)}]` +
        ` = ${((median / 1000 / memoryTurnMs) * 100).toFixed(2)}% of the median memory-store turn (${memoryTurnMs.toFixed(3)} ms)`,
    );
  }
  console.log(
    `[otel bench] the instrumentation's own work for one turn's events over a bare bus, median of ${rounds} alternating blocks of ${block} [interquartile range]` +
      ` (${events.length} events: ${[...new Set(events.map((event) => event.type))].join(", ")}):\n${rows.join("\n")}`,
  );
}
await isolated();

const quick = variants("memory");
describe("one scripted role turn (memory store)", () => {
  bench("not instrumented", () => turn(quick[0]!), { time: 2_000, warmupTime: 500 });
  bench("traceTurn + SDK (batch, metrics)", () => turn(quick[3]!), { time: 2_000, warmupTime: 500 });
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
