import { createEventBus, KeelError, type EventBus, type Usage } from "@keel/core";
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { errAsync, okAsync } from "neverthrow";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { instrumentKeel } from "./index.js";

const contextManager = new AsyncLocalStorageContextManager().enable();
context.setGlobalContextManager(contextManager);
afterAll(() => {
  context.disable();
});

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer("@keel/otel");
const hostTracer = provider.getTracer("host-app");
beforeEach(() => exporter.reset());

const MARKER = "MARKER-7f3a-do-not-export";
const usage: Usage = { inputUncached: 100, cacheRead: 40, cacheWrite: 10, output: 30, reasoning: null, costUsd: null };
const tick = () => new Promise((resolve) => setImmediate(resolve));

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan => {
  const found = spans().filter((span) => span.name === name);
  expect(found, `one span named ${name}`).toHaveLength(1);
  return found[0]!;
};
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** The events of one runtime role turn, in the runtime's order (reserve, turn, settle, accesses, work session). */
async function emitTurn(bus: EventBus, role: string, at: number, options: { action?: "fresh" | "resumed" | "rotated"; threadId?: string | null } = {}): Promise<void> {
  bus.emit({ type: "budget.reserved", at: at - 900, scope: `role.${role}`, dimensions: ["tokens", "calls"], amounts: { tokens: 1200, calls: 1 }, limitingScope: null, reservationId: "r1" });
  await tick();
  bus.emit({
    type: "role.session.turn",
    at,
    missionId: "m1",
    role,
    policy: "mission",
    action: options.action ?? "fresh",
    rotationReason: "first_turn",
    backend: "claude-code",
    model: "claude-sonnet-4-5",
    promptBytes: 512,
    usage,
    wallMs: 1000,
    capsulePath: `missions/m1/${role}.json`,
    threadId: options.threadId === undefined ? "thread-1" : options.threadId,
    turn: 1,
  });
  await tick();
  bus.emit({ type: "budget.settled", at: at + 5, scope: `role.${role}`, dimensions: ["tokens"], amounts: { tokens: 180 }, limitingScope: null, reservationId: "r1", details: { outcome: "settled" } });
  bus.emit({ type: "agent.io.read", at: at + 6, role, missionId: "m1", path: "src/a.ts", bytes: 120, skill: null });
  bus.emit({ type: "agent.io.write", at: at + 6, role, missionId: "m1", path: "src/b.ts", bytes: 80, skill: null });
  await tick();
  bus.emit({ type: "work.session.turn", at: at + 8, missionId: "m1", role, sessionId: "ws1", model: "claude-sonnet-4-5", usage, tokens: 180, toolCalls: 3, modelPin: "match", wallMs: 1000, taskId: null });
}

describe("instrumentKeel from events alone", () => {
  it("makes a role turn an invoke_agent span with GenAI attributes, its file accesses execute_tool children", async () => {
    const bus = createEventBus();
    const otel = instrumentKeel({ events: bus }, { tracer, providers: { "claude-code": "anthropic" } });
    await hostTracer.startActiveSpan("host request", async (host) => {
      await emitTurn(bus, "engineer", 1_700_000_000_000);
      host.end();
    });
    otel.uninstrument();

    const turn = named("invoke_agent engineer");
    expect(turn.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "engineer",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.conversation.id": "thread-1",
      "gen_ai.usage.input_tokens": 150,
      "gen_ai.usage.output_tokens": 30,
      "gen_ai.usage.cache_read.input_tokens": 40,
      "gen_ai.usage.cache_creation.input_tokens": 10,
      "keel.session.policy": "mission",
      "keel.session.action": "fresh",
      "keel.session.rotation_reason": "first_turn",
      "keel.capsule.path": "missions/m1/engineer.json",
      "keel.prompt.bytes": 512,
      "keel.work_session.id": "ws1",
      "keel.tool_calls": 3,
    });
    // Unknown stays absent, never 0.
    expect(turn.attributes).not.toHaveProperty("gen_ai.usage.reasoning.output_tokens");
    expect(turn.attributes).not.toHaveProperty("keel.usage.cost_usd");
    // Its time is the turn's: it ended at role.session.turn, wallMs before that it started.
    expect(turn.startTime).toEqual([1_699_999_999, 0]);
    expect(turn.endTime).toEqual([1_700_000_000, 0]);
    // The host's active span is its parent.
    expect(parentOf(turn)).toBe(named("host request").spanContext().spanId);

    const read = named("execute_tool read");
    const write = named("execute_tool write");
    expect(read.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read", "keel.io.path": "src/a.ts", "keel.io.bytes": 120 });
    expect(parentOf(read)).toBe(turn.spanContext().spanId);
    expect(parentOf(write)).toBe(turn.spanContext().spanId);
    expect(read.spanContext().traceId).toBe(turn.spanContext().traceId);
  });

  it("gives each of the three session actions its own turn span", async () => {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer });
    await emitTurn(bus, "engineer", 1_700_000_010_000, { action: "fresh" });
    await emitTurn(bus, "engineer", 1_700_000_020_000, { action: "resumed" });
    await emitTurn(bus, "engineer", 1_700_000_030_000, { action: "rotated", threadId: null });
    otel.uninstrument();
    const turns = spans().filter((span) => span.name === "invoke_agent engineer");
    expect(turns.map((span) => span.attributes["keel.session.action"])).toEqual(["fresh", "resumed", "rotated"]);
    expect(turns[2]!.attributes).not.toHaveProperty("gen_ai.conversation.id");
    expect(spans().filter((span) => span.name.startsWith("execute_tool"))).toHaveLength(6);
  });

  it("ends an event-built turn span after turnSettleMs when no work.session.turn follows", async () => {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer, turnSettleMs: 10 });
    bus.emit({ type: "role.session.turn", at: 5_000, missionId: "m1", role: "reviewer", policy: "fresh", action: "fresh", rotationReason: "policy_fresh", backend: "codex", model: null, promptBytes: 10, usage: null, wallMs: 2_000, capsulePath: "c", threadId: null, turn: 1 });
    expect(spans()).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 40));
    const turn = named("invoke_agent reviewer");
    expect(turn.endTime).toEqual([5, 0]);
    expect(turn.attributes).not.toHaveProperty("gen_ai.request.model");
    expect(turn.attributes).not.toHaveProperty("gen_ai.usage.input_tokens");
    otel.uninstrument();
  });
});

describe("traceTurn", () => {
  it("makes the turn's span active: events land on it and an SDK's spans nest under it", async () => {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer });
    const input = { missionId: "m1", role: "engineer", prompt: `Fix it ${MARKER}` };
    let sdkSpanId = "";
    await hostTracer.startActiveSpan("host request", async (host) => {
      const result = await otel.traceTurn(input, async () => {
        await emitTurn(bus, "engineer", Date.now());
        // An agent SDK running in-process starts its own span on the active context.
        await hostTracer.startActiveSpan("chat claude-sonnet-4-5", async (sdk) => {
          sdkSpanId = sdk.spanContext().spanId;
          await tick();
          sdk.end();
        });
        return okAsync({ text: `done ${MARKER}` });
      });
      expect(result.isOk()).toBe(true);
      host.end();
    });
    otel.uninstrument();

    const turns = spans().filter((span) => span.name === "invoke_agent engineer");
    expect(turns, "one span for the turn, not one per source").toHaveLength(1);
    const turn = turns[0]!;
    expect(parentOf(turn)).toBe(named("host request").spanContext().spanId);
    expect(parentOf(named("chat claude-sonnet-4-5"))).toBe(turn.spanContext().spanId);
    expect(sdkSpanId).not.toBe("");
    expect(parentOf(named("execute_tool read"))).toBe(turn.spanContext().spanId);
    expect(turn.attributes).toMatchObject({ "gen_ai.request.model": "claude-sonnet-4-5", "keel.session.action": "fresh", "keel.work_session.id": "ws1" });
    expect(turn.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(turn.events.map((event) => event.name)).toEqual(["budget.reserved", "budget.settled"]);
    expect(turn.events[1]!.attributes).toMatchObject({ "keel.budget.scope": "role.engineer", "keel.budget.outcome": "settled", "keel.budget.amount.tokens": 180 });
  });

  it("sets ERROR status and the KeelError code on a failed turn, without its message", async () => {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer });
    const result = await otel.traceTurn({ missionId: "m1", role: "engineer" }, () =>
      errAsync(new KeelError("backend_failed", `claude exited 1: ${MARKER}`)),
    );
    expect(result.isErr()).toBe(true);
    otel.uninstrument();
    const turn = named("invoke_agent engineer");
    expect(turn.status).toEqual({ code: SpanStatusCode.ERROR, message: "backend_failed" });
    expect(turn.attributes).toMatchObject({ "error.type": "backend_failed", "keel.error.code": "backend_failed" });
  });

  it("records a refusal naming the strictest limit on the turn's span, and its code as the error", async () => {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer });
    const result = await otel.traceTurn({ missionId: "m1", role: "engineer" }, () => {
      bus.emit({
        type: "budget.refused",
        scope: "role.engineer",
        dimensions: ["tokens"],
        amounts: { tokens: 5_000 },
        limitingScope: "mission.m1",
        details: { scope: "role.engineer", limitingScope: "mission.m1", level: "hard", dimension: "tokens", asked: 5_000, remaining: 1_000, limit: 10_000 },
      });
      return errAsync(new KeelError("budget_exceeded", "over the mission's tokens"));
    });
    expect(result.isErr()).toBe(true);
    otel.uninstrument();
    const turn = named("invoke_agent engineer");
    expect(turn.status.code).toBe(SpanStatusCode.ERROR);
    expect(turn.attributes["error.type"]).toBe("budget_exceeded");
    const refused = turn.events.find((event) => event.name === "budget.refused");
    expect(refused?.attributes).toMatchObject({ "keel.budget.limiting_scope": "mission.m1", "keel.budget.dimension": "tokens", "keel.budget.remaining": 1_000, "keel.budget.limit": 10_000 });
  });

  it("ends the span and rethrows when the turn throws or rejects", async () => {
    const otel = instrumentKeel(createEventBus(), { tracer });
    expect(() => otel.traceTurn({ role: "engineer" }, () => { throw new KeelError("aborted", "stop"); })).toThrow("stop");
    await expect(otel.traceTurn({ role: "engineer" }, () => Promise.reject(new KeelError("timeout", "late")))).rejects.toThrow("late");
    await tick();
    otel.uninstrument();
    const codes = spans().map((span) => span.attributes["error.type"]);
    expect(codes).toEqual(["aborted", "timeout"]);
  });
});

describe("content", () => {
  async function runWithText(captureContent: boolean): Promise<string> {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer, captureContent });
    await otel.traceTurn({ missionId: "m1", role: "engineer", prompt: `prompt ${MARKER}` }, async () => {
      bus.emit({ type: "role.session.warning", missionId: "m1", role: "engineer", target: "capsule", operation: "write", code: "io_failed", message: `could not write ${MARKER}` });
      await emitTurn(bus, "engineer", Date.now());
      return okAsync({ text: `answer ${MARKER}` });
    });
    bus.emit({ type: "work.session.audited", missionId: "m1", closedSinceAudit: 2, note: `evidence ${MARKER}` });
    otel.uninstrument();
    return JSON.stringify(spans().map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status })));
  }

  it("puts no prompt, answer, warning or note text on any span by default", async () => {
    const exported = await runWithText(false);
    expect(exported).toContain("invoke_agent engineer");
    expect(exported).toContain("role.session.warning");
    expect(exported).not.toContain(MARKER);
  });

  it("records the text only when the host opts in", async () => {
    const exported = await runWithText(true);
    const turn = named("invoke_agent engineer");
    expect(JSON.parse(String(turn.attributes["gen_ai.input.messages"]))).toEqual([{ role: "user", parts: [{ type: "text", content: `prompt ${MARKER}` }] }]);
    expect(String(turn.attributes["gen_ai.output.messages"])).toContain(`answer ${MARKER}`);
    expect(exported).toContain(`evidence ${MARKER}`);
  });
});

describe("workflows and work sessions", () => {
  it("makes a workflow run a span with a child per stage, skipped stages marked and checkpoints as events", () => {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer });
    const base = { runId: "run-1", version: 1 } as const;
    bus.emit({ type: "workflow.run.started", at: 1_000, ...base, stage: "plan", status: "running" });
    bus.emit({ type: "workflow.stage.started", at: 1_000, ...base, stage: "plan", status: "running" });
    bus.emit({ type: "workflow.stage.completed", at: 3_000, ...base, version: 2, stage: "plan", status: "completed" });
    bus.emit({ type: "workflow.stage.completed", at: 3_000, ...base, version: 3, stage: "docs", status: "skipped" });
    bus.emit({ type: "workflow.checkpoint.recorded", at: 4_000, ...base, version: 4, stage: "review", status: "approve" });
    bus.emit({ type: "workflow.run.completed", at: 5_000, ...base, version: 5, stage: null, status: "completed" });
    otel.uninstrument();
    const run = named("invoke_workflow");
    expect(run.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_workflow", "keel.workflow.run_id": "run-1", "keel.workflow.version": 5, "keel.workflow.status": "completed" });
    expect(run.startTime).toEqual([1, 0]);
    expect(run.endTime).toEqual([5, 0]);
    expect(run.events.map((event) => [event.name, event.attributes?.["keel.workflow.status"]])).toEqual([["workflow.checkpoint.recorded", "approve"]]);
    const plan = named("stage plan");
    const docs = named("stage docs");
    expect(parentOf(plan)).toBe(run.spanContext().spanId);
    expect(parentOf(docs)).toBe(run.spanContext().spanId);
    expect(plan.attributes).not.toHaveProperty("keel.workflow.stage.skipped");
    expect(docs.attributes["keel.workflow.stage.skipped"]).toBe(true);
    expect(plan.endTime).toEqual([3, 0]);
  });

  it("marks a failed run ERROR", () => {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer });
    bus.emit({ type: "workflow.stage.started", at: 1_000, runId: "run-2", version: 7, stage: "build", status: "running" });
    bus.emit({ type: "workflow.run.failed", at: 2_000, runId: "run-2", version: 8, stage: "build", status: "failed" });
    otel.uninstrument();
    expect(named("invoke_workflow").status.code).toBe(SpanStatusCode.ERROR);
    expect(named("stage build").endTime).toEqual([2, 0]);
  });

  it("makes a closed work session a span over its window with its totals, unknown ones absent", () => {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer });
    bus.emit({ type: "work.session.closed", at: 9_000, missionId: "m1", role: "engineer", sessionId: "ws1", model: null, turns: 4, tasks: 2, tokens: 900, toolCalls: null, turnsWithoutToolCalls: 4, activeMinutes: 3, openedAt: 1_000, closedAt: 9_000 });
    otel.uninstrument();
    const session = named("work_session");
    expect(session.attributes).toMatchObject({ "keel.work_session.id": "ws1", "keel.work_session.turns": 4, "keel.work_session.tokens": 900, "keel.work_session.active_minutes": 3 });
    expect(session.attributes).not.toHaveProperty("keel.tool_calls");
    expect(session.startTime).toEqual([1, 0]);
  });
});

describe("lifecycle and bad input", () => {
  it("stops listening on uninstrument", () => {
    const bus = createEventBus();
    const otel = instrumentKeel(bus, { tracer });
    expect(bus.listenerCount("*")).toBe(1);
    otel.uninstrument();
    otel.uninstrument();
    expect(bus.listenerCount("*")).toBe(0);
    bus.emit({ type: "agent.io.read", role: "engineer", missionId: "m1", path: "a", bytes: 1, skill: null });
    expect(spans()).toHaveLength(0);
  });

  it("refuses a missing bus, bad options and a bad turn with invalid_input", () => {
    const bus = createEventBus();
    const codeOf = (run: () => unknown): string | undefined => {
      try {
        run();
      } catch (error) {
        return KeelError.is(error) ? error.code : "not a KeelError";
      }
      return undefined;
    };
    expect(codeOf(() => instrumentKeel({} as never))).toBe("invalid_input");
    expect(codeOf(() => instrumentKeel(bus, { turnSettleMs: -1 }))).toBe("invalid_input");
    expect(codeOf(() => instrumentKeel(bus, { tracer: {} as never }))).toBe("invalid_input");
    expect(codeOf(() => instrumentKeel(bus, { colour: "red" } as never))).toBe("invalid_input");
    const otel = instrumentKeel(bus, { tracer });
    expect(codeOf(() => otel.traceTurn({ role: "" }, () => 1))).toBe("invalid_input");
    expect(codeOf(() => otel.traceTurn({ role: "engineer" }, "run" as never))).toBe("invalid_input");
    otel.uninstrument();
  });
});

describe("with no SDK registered", () => {
  it("builds nothing while the global provider is the API's no-op, and starts once the host registers an SDK", async () => {
    const bus = createEventBus();
    // No tracer given: the global provider's, which no one has registered yet.
    const otel = instrumentKeel(bus);
    const input = { missionId: "m1", role: "engineer" };
    const run = () => otel.traceTurn(input, async () => okAsync({ text: "done" }));
    await emitTurn(bus, "engineer", 1_700_000_000_000);
    expect((await run())._unsafeUnwrap()).toEqual({ text: "done" });
    expect(spans()).toHaveLength(0);

    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    try {
      const result = await otel.traceTurn(input, async () => {
        await emitTurn(bus, "engineer", Date.now());
        return okAsync({ text: "done" });
      });
      expect(result._unsafeUnwrap()).toEqual({ text: "done" });
      otel.uninstrument();
      const turn = named("invoke_agent engineer");
      expect(turn.attributes).toMatchObject({ "gen_ai.agent.name": "engineer", "keel.mission.id": "m1", "keel.session.action": "fresh" });
      expect(parentOf(named("execute_tool read"))).toBe(turn.spanContext().spanId);
      expect(turn.events.map((event) => event.name)).toEqual(["budget.reserved", "budget.settled"]);
    } finally {
      trace.disable();
    }
  });

  it("runs a turn as it is after uninstrument", async () => {
    const otel = instrumentKeel(createEventBus(), { tracer });
    otel.uninstrument();
    expect(otel.traceTurn({ role: "engineer" }, () => 42)).toBe(42);
    expect(spans()).toHaveLength(0);
  });
});

// The global provider is left as it was by these tests: trace.getTracerProvider() is the API's proxy.
it("registers no global SDK itself", () => {
  instrumentKeel(createEventBus()).uninstrument();
  expect(trace.getTracer("x").startSpan("probe").isRecording()).toBe(false);
});
