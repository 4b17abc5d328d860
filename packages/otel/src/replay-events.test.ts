import { createScriptedBackend } from "@keel/backends/scripted";
import { KeelError, type KeelEvent } from "@keel/core";
import { createKeel } from "@keel/runtime";
import { useTempDirs } from "@keel/testkit";
import { SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { beforeEach, describe, expect, it } from "vitest";
import { KEEL_OTEL_SCOPE, replayEvents } from "./index.js";

// No context manager is registered here: a replay needs none (it builds each span's parent itself).
const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(KEEL_OTEL_SCOPE);
const dirs = useTempDirs("keel-otel-replay-");
beforeEach(() => exporter.reset());

const MARKER = "MARKER-replay-5d1e";
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const millis = ([seconds, nanos]: [number, number]): number => seconds * 1000 + nanos / 1e6;

/** A real event log: three turns of the runtime, a fourth refused by the mission's call budget, as JSON lines read back. */
async function recordedLog(): Promise<KeelEvent[]> {
  const dir = dirs.dir();
  const keel = dirs.track(
    createKeel({
      dir,
      cwd: dir,
      backends: [createScriptedBackend({ resumable: true, script: (turn) => `Decision: step ${turn.call} ${MARKER}\nInspected: src/app.ts` })],
      policy: "rolling",
      budget: { mission: { calls: 3 } },
    }),
  );
  const events: KeelEvent[] = [];
  keel.events.on("*", (event) => events.push(event));
  for (const step of [1, 2, 3, 4]) {
    const input = { missionId: "m1", role: "engineer", prompt: `Step ${step} ${MARKER}` };
    const result = await keel.runRoleTurn(input);
    if (step < 4) expect(result.isOk()).toBe(true);
    else expect(result.isErr() && result.error.code).toBe("budget_exceeded");
  }
  // A backend failure as a log from another host may hold it.
  events.push({ type: "backend.turn.failed", at: Date.now(), backend: "codex", code: "backend_failed", resumeFailed: false, message: `exit 1 ${MARKER}` });
  // As a JSONL file holds them: plain JSON, read back.
  return JSON.parse(JSON.stringify(events)) as KeelEvent[];
}

describe("replayEvents", () => {
  it("replays a log as the spans of its turns, with the events' own times", async () => {
    const events = await recordedLog();
    const summary = replayEvents(events, { tracer, providers: { scripted: "keel.scripted" } });
    expect(summary).toEqual({ events: events.length, turns: 3 });

    const spans = exporter.getFinishedSpans();
    const turns = spans.filter((span) => span.name === "invoke_agent engineer");
    const reported = events.filter((event): event is Extract<KeelEvent, { type: "role.session.turn" }> => event.type === "role.session.turn");
    expect(turns).toHaveLength(3);
    expect(turns.map((span) => span.attributes["keel.session.action"])).toEqual(["fresh", "resumed", "resumed"]);
    turns.forEach((turn, index) => {
      const event = reported[index]!;
      expect(millis(turn.endTime)).toBe(event.at);
      expect(millis(turn.startTime)).toBe(event.at - event.wallMs);
      expect(turn.attributes).toMatchObject({ "gen_ai.provider.name": "keel.scripted", "keel.session.policy": "rolling", "keel.mission.id": "m1" });
      expect(parentOf(turn), "each turn is a root: a log has no host span").toBeUndefined();
      // The reservation (emitted before the turn) and the settlement are events on its span.
      expect(turn.events.map((item) => item.name)).toEqual(expect.arrayContaining(["budget.reserved", "budget.settled"]));
      const reads = spans.filter((span) => span.name === "execute_tool read" && parentOf(span) === turn.spanContext().spanId);
      expect(reads.map((span) => span.attributes["keel.io.path"])).toEqual(["src/app.ts"]);
    });

    const refused = spans.filter((span) => span.name === "budget.refused");
    expect(refused).toHaveLength(1);
    expect(refused[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: "budget_exceeded" });
    expect(refused[0]!.attributes).toMatchObject({ "error.type": "budget_exceeded", "keel.budget.limiting_scope": "mission.m1", "keel.budget.dimension": "calls" });
    const failed = spans.find((span) => span.name === "backend.turn.failed");
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed?.attributes).toMatchObject({ "error.type": "backend_failed", "keel.error.code": "backend_failed" });

    // Nothing is left over: no orphan reservation spans, no text.
    expect(spans.filter((span) => span.name === "budget.reserved" || span.name === "budget.settled")).toEqual([]);
    expect(JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events, span.status]))).not.toContain(MARKER);
  });

  it("replays an empty log to nothing and refuses what is not a list of events", () => {
    expect(replayEvents([], { tracer })).toEqual({ events: 0, turns: 0 });
    expect(exporter.getFinishedSpans()).toEqual([]);
    const codeOf = (run: () => unknown): string | undefined => {
      try {
        run();
      } catch (error) {
        return KeelError.is(error) ? error.code : "not a KeelError";
      }
      return undefined;
    };
    expect(codeOf(() => replayEvents("events.jsonl" as never))).toBe("invalid_input");
    expect(codeOf(() => replayEvents([{ type: "role.session.turn" }] as never))).toBe("invalid_input");
    expect(codeOf(() => replayEvents([], { colour: "red" } as never))).toBe("invalid_input");
  });
});
