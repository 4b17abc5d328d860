import { createScriptedBackend } from "@keel/backends/scripted";
import { createKeel, type Keel } from "@keel/runtime";
import { useTempDirs } from "@keel/testkit";
import { context, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { beforeEach, describe, expect, it } from "vitest";
import { instrumentKeel } from "./index.js";

// Keel's real runtime over a scripted backend: the events, their order and their async context
// are the runtime's own, not a test's imitation.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer("@keel/otel");
const dirs = useTempDirs("keel-otel-");
beforeEach(() => exporter.reset());

const MARKER = "MARKER-91c2-never-exported";
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

function keelWith(policy: "fresh" | "mission" | "rolling", script: Parameters<typeof createScriptedBackend>[0]["script"], calls = 100): Keel {
  const dir = dirs.dir();
  return dirs.track(
    createKeel({
      dir,
      cwd: dir,
      backends: [createScriptedBackend({ resumable: true, script })],
      policy,
      budget: { mission: { calls, tokens: 2_000_000 } },
    }),
  );
}

async function threeTurns(keel: Keel, otel: ReturnType<typeof instrumentKeel>): Promise<void> {
  for (const index of [1, 2, 3]) {
    const input = { missionId: "m1", role: "engineer", prompt: `Step ${index}: ${MARKER}` };
    const result = await otel.traceTurn(input, () => keel.runRoleTurn(input));
    expect(result.isOk(), result.isErr() ? result.error.message : "").toBe(true);
  }
}

describe("with the runtime", () => {
  const expected = { fresh: ["fresh", "fresh", "fresh"], mission: ["fresh", "resumed", "resumed"], rolling: ["fresh", "resumed", "resumed"] } as const;
  for (const policy of ["fresh", "mission", "rolling"] as const) {
    it(`traces the ${policy} policy's turns, their file reads and budget decisions`, async () => {
      const keel = keelWith(policy, (turn) => `Decision: step ${turn.call} done ${MARKER}\nInspected: src/app.ts`);
      const otel = instrumentKeel(keel, { tracer, providers: { scripted: "keel.scripted" } });
      await threeTurns(keel, otel);
      otel.uninstrument();

      const all = exporter.getFinishedSpans();
      const turns = all.filter((span) => span.name === "invoke_agent engineer");
      expect(turns.map((span) => span.attributes["keel.session.action"])).toEqual(expected[policy]);
      expect(turns.every((span) => span.attributes["keel.session.policy"] === policy)).toBe(true);
      for (const turn of turns) {
        expect(turn.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "keel.scripted", "keel.mission.id": "m1" });
        expect(typeof turn.attributes["gen_ai.usage.input_tokens"]).toBe("number");
        expect(typeof turn.attributes["keel.prompt.bytes"]).toBe("number");
        expect(turn.status.code).not.toBe(SpanStatusCode.ERROR);
        expect(turn.events.map((event) => event.name)).toEqual(expect.arrayContaining(["budget.reserved", "budget.settled"]));
        const reads = all.filter((span) => span.name === "execute_tool read" && parentOf(span) === turn.spanContext().spanId);
        expect(reads.map((span) => span.attributes["keel.io.path"])).toEqual(["src/app.ts"]);
      }
      if (policy !== "fresh") {
        const threads = new Set(turns.map((span) => span.attributes["gen_ai.conversation.id"]));
        expect(threads.size).toBe(1);
      }
      expect(JSON.stringify(all.map((span) => [span.attributes, span.events, span.status]))).not.toContain(MARKER);
    });
  }

  it("marks a failed turn and a refused turn ERROR with their codes", async () => {
    const failing = keelWith("fresh", { fail: "backend_failed", message: `boom ${MARKER}` });
    const otel = instrumentKeel(failing, { tracer });
    const input = { missionId: "m1", role: "engineer", prompt: "go" };
    const failed = await otel.traceTurn(input, () => failing.runRoleTurn(input));
    expect(failed.isErr()).toBe(true);
    otel.uninstrument();

    const capped = keelWith("fresh", "Decision: ok", 1);
    const cappedOtel = instrumentKeel(capped, { tracer });
    await cappedOtel.traceTurn(input, () => capped.runRoleTurn(input));
    const refused = await cappedOtel.traceTurn(input, () => capped.runRoleTurn(input));
    expect(refused.isErr() && refused.error.code).toBe("budget_exceeded");
    cappedOtel.uninstrument();

    const [failedSpan, , refusedSpan] = exporter.getFinishedSpans().filter((span) => span.name === "invoke_agent engineer");
    expect(failedSpan!.status.code).toBe(SpanStatusCode.ERROR);
    expect(failedSpan!.attributes["error.type"]).toBe("backend_failed");
    // The runtime's backend.turn.failed is an event on the failed turn's span, not a span of its own.
    const failure = failedSpan!.events.find((event) => event.name === "backend.turn.failed");
    expect(failure?.attributes).toEqual({
      "keel.backend": "scripted",
      "keel.error.code": "backend_failed",
      "keel.error.retryable": false,
      "gen_ai.agent.name": "engineer",
      "keel.mission.id": "m1",
    });
    expect(exporter.getFinishedSpans().filter((span) => span.name === "backend.turn.failed")).toEqual([]);
    // The refused turn never reached its backend: no backend failure on it.
    expect(refusedSpan!.events.some((event) => event.name === "backend.turn.failed")).toBe(false);
    expect(refusedSpan!.status.code).toBe(SpanStatusCode.ERROR);
    expect(refusedSpan!.attributes["error.type"]).toBe("budget_exceeded");
    const refusal = refusedSpan!.events.find((event) => event.name === "budget.refused");
    expect(refusal?.attributes?.["keel.budget.limiting_scope"]).toBe("mission.m1");
    expect(refusal?.attributes?.["keel.budget.dimension"]).toBe("calls");
    expect(JSON.stringify(exporter.getFinishedSpans().map((span) => [span.attributes, span.events, span.status]))).not.toContain(MARKER);
  });

  it("makes the runtime's backend.turn.failed an ERROR span of its own when no traced turn holds it", async () => {
    const failing = keelWith("rolling", [{ text: "Decision: first" }, { fail: "timeout", message: `slow ${MARKER}` }]);
    const otel = instrumentKeel(failing, { tracer });
    expect((await failing.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "one" })).isOk()).toBe(true);
    const failed = await failing.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "two" });
    expect(failed.isErr() && failed.error.code).toBe("timeout");
    otel.uninstrument();

    const spans = exporter.getFinishedSpans();
    // The first turn's span (built from its events) stays OK: the failure is not recorded on it.
    const [first] = spans.filter((span) => span.name === "invoke_agent engineer");
    expect(first!.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(first!.events.some((event) => event.name === "backend.turn.failed")).toBe(false);
    const alone = spans.filter((span) => span.name === "backend.turn.failed");
    expect(alone).toHaveLength(1);
    expect(alone[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: "timeout" });
    expect(alone[0]!.attributes).toMatchObject({ "error.type": "timeout", "keel.error.code": "timeout", "keel.backend": "scripted", "gen_ai.agent.name": "engineer", "keel.mission.id": "m1", "keel.error.retryable": true });
    expect(JSON.stringify(spans.map((span) => [span.attributes, span.events, span.status]))).not.toContain(MARKER);
  });
});
