/**
 * One trace, end to end (issue 34): a Keel role turn over `@keel/ai-sdk` with the AI SDK's own
 * telemetry on, run by `@keel/otel`'s `traceTurn` inside a host's request span. The real `ai` 6
 * emits its spans while the turn's `invoke_agent` span is active, so they nest under it; the real
 * OpenTelemetry SDK records them. Offline, against the fake provider.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createAiSdkBackend, type AiSdkTelemetrySettings } from "@keel/ai-sdk";
import { instrumentKeel } from "@keel/otel";
import { createKeel } from "@keel/runtime";
import { createMemoryStore } from "@keel/store";
import { useTempDirs } from "@keel/testkit";
import { startFakeProvider, type FakeProvider } from "@keel/testkit/provider";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { tool } from "ai";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { z } from "zod";

const MARKER = "MARKER-5d1e-never-exported";
const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();
const dirs = useTempDirs("keel-otel-ai-sdk-");
const providers: FakeProvider[] = [];

beforeAll(() => {
  // The host's SDK: a context manager (without one no span nests under another) and a global provider.
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(tracerProvider);
});
afterEach(async () => {
  exporter.reset();
  for (const provider of providers.splice(0)) await provider.close();
});
afterAll(() => {
  trace.disable();
  context.disable();
});

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** A role turn that reads a file with the host's tool, then answers; the prompt and file hold the marker. */
async function tracedTurn(telemetry: AiSdkTelemetrySettings | undefined) {
  const cwd = dirs.dir();
  await writeFile(join(cwd, "notes.txt"), `hello ${MARKER}`);
  const provider = (
    await startFakeProvider({
      replies: [
        { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "notes.txt" } }], usage: { inputUncached: 120, output: 8 } },
        { text: `The notes say hello ${MARKER}.\nDecision: notes read`, usage: { inputUncached: 160, output: 12 } },
      ],
    })
  )._unsafeUnwrap();
  providers.push(provider);
  const read = tool({ description: "Read a file", inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => readFile(join(cwd, path), "utf8") });
  const backend = createAiSdkBackend({
    model: createOpenAICompatible({ name: "fake", baseURL: provider.openAiUrl, apiKey: "test", includeUsage: true })("fake-model"),
    tools: { read },
    toolFileAccess: { read: { op: "read", pathArgument: "path" } },
    store: createMemoryStore(),
    maxRetries: 0,
    ...(telemetry === undefined ? {} : { telemetry }),
  });
  const keel = dirs.track(createKeel({ dir: dirs.dir(), cwd, backends: [backend], policy: "mission", instructions: false }));
  const otel = instrumentKeel(keel);
  const input = { missionId: "m1", role: "engineer", prompt: `Read the notes ${MARKER}` };
  const host = trace.getTracer("host-app");
  await host.startActiveSpan("POST /missions/m1", async (request) => {
    const result = await otel.traceTurn(input, () => keel.runRoleTurn(input));
    expect(result.isOk(), result.isErr() ? result.error.message : "").toBe(true);
    request.end();
  });
  otel.uninstrument();
  expect(provider.modelRequests()).toHaveLength(2);
  return exporter.getFinishedSpans();
}

it("nests the AI SDK's own spans under the turn's invoke_agent span, in the host's trace, with no text", async () => {
  const spans = await tracedTurn({ isEnabled: true, functionId: "engineer-turn" });
  const named = (name: string) => spans.filter((span) => span.name === name);
  const [request] = named("POST /missions/m1");
  const [turn] = named("invoke_agent engineer");
  expect(request).toBeDefined();
  expect(turn).toBeDefined();
  expect(parentOf(turn!)).toBe(request!.spanContext().spanId);

  // ai 6's spans: the loop, its two model calls and the tool call, all in the one trace under the turn.
  const [loop] = named("ai.generateText");
  expect(loop, `the AI SDK's spans: ${spans.map((span) => span.name).join(", ")}`).toBeDefined();
  expect(parentOf(loop!)).toBe(turn!.spanContext().spanId);
  const calls = named("ai.generateText.doGenerate");
  expect(calls).toHaveLength(2);
  expect(calls.every((call) => parentOf(call) === loop!.spanContext().spanId)).toBe(true);
  const [toolCall] = named("ai.toolCall");
  expect(toolCall).toBeDefined();
  expect(parentOf(toolCall!)).toBe(loop!.spanContext().spanId);
  expect(toolCall!.attributes["ai.toolCall.name"]).toBe("read");
  expect(loop!.attributes["ai.telemetry.functionId"]).toBe("engineer-turn");
  expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
  // Keel's own file access is still a child of the turn.
  expect(parentOf(named("execute_tool read")[0]!)).toBe(turn!.spanContext().spanId);

  // recordInputs / recordOutputs default to false: neither the prompt, the file nor the answer is on any span.
  expect(JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events]))).not.toContain(MARKER);
});

it("records the AI SDK's inputs and outputs only when the host sets recordInputs and recordOutputs", async () => {
  const spans = await tracedTurn({ isEnabled: true, recordInputs: true, recordOutputs: true });
  const [loop] = spans.filter((span) => span.name === "ai.generateText");
  expect(JSON.stringify(loop!.attributes)).toContain(MARKER);
  // Keel's own spans still carry none.
  const keelSpans = spans.filter((span) => span.instrumentationScope.name === "@keel/otel");
  expect(keelSpans.length).toBeGreaterThan(0);
  expect(JSON.stringify(keelSpans.map((span) => [span.attributes, span.events]))).not.toContain(MARKER);
});

it("emits no AI SDK span without the telemetry option", async () => {
  const spans = await tracedTurn(undefined);
  expect(spans.map((span) => span.name).filter((name) => name.startsWith("ai."))).toEqual([]);
  expect(spans.map((span) => span.name)).toContain("invoke_agent engineer");
});

it("refuses telemetry settings that are not the SDK's with invalid_input", () => {
  for (const telemetry of [{ isEnabled: "yes" }, { tracer: {} }, { unknown: true }, null]) {
    expect(() => createAiSdkBackend({ model: "fake-model", store: createMemoryStore(), telemetry: telemetry as never })).toThrowError(
      expect.objectContaining({ code: "invalid_input" }) as unknown as Error,
    );
  }
});
