import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createEventBus, KeelError } from "@keel/core";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { errAsync, okAsync } from "neverthrow";
import { afterAll, beforeAll, expect, it } from "vitest";
import { instrumentKeel, KEEL_OTEL_SCOPE } from "./index.js";

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

interface OtlpValue { stringValue?: string; intValue?: number | string; boolValue?: boolean; arrayValue?: unknown }
interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: { key: string; value: OtlpValue }[]; status: { code?: number } }
interface OtlpBody { resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[] }

/** A loopback OTLP/HTTP receiver: keeps every JSON body posted to /v1/traces. */
const bodies: OtlpBody[] = [];
const requests: { url: string | undefined; contentType: string | undefined }[] = [];
let server: Server;
let url = "";
beforeAll(async () => {
  server = createServer((request, response) => {
    let text = "";
    request.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    request.on("end", () => {
      requests.push({ url: request.url, contentType: request.headers["content-type"] });
      bodies.push(JSON.parse(text) as OtlpBody);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  if (!value) return undefined;
  return value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue);
};

it("exports Keel's spans as OTLP/HTTP JSON to a receiver, nested as they ran", async () => {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "keel-test" }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  const bus = createEventBus();
  const otel = instrumentKeel(bus, { tracer: provider.getTracer(KEEL_OTEL_SCOPE), providers: { codex: "openai" } });
  const input = { missionId: "m1", role: "engineer", prompt: "secret prompt text" };
  await otel.traceTurn(input, async () => {
    bus.emit({ type: "role.session.turn", missionId: "m1", role: "engineer", policy: "rolling", action: "resumed", rotationReason: "within_limits", backend: "codex", model: "gpt-5", promptBytes: 900, usage: { inputUncached: 10, cacheRead: 0, cacheWrite: null, output: 5, reasoning: 2, costUsd: null }, wallMs: 20, capsulePath: "c.json", threadId: "t-9", turn: 4 });
    bus.emit({ type: "agent.io.search", role: "engineer", missionId: "m1", path: "src", bytes: 0, skill: null });
    return okAsync({ text: "secret answer text" });
  });
  await otel.traceTurn({ role: "reviewer" }, () => errAsync(new KeelError("resume_failed", "no such thread")));
  otel.uninstrument();
  await provider.forceFlush();
  await provider.shutdown();

  expect(requests.every((request) => request.url === "/v1/traces" && request.contentType === "application/json")).toBe(true);
  const resource = bodies[0]!.resourceSpans[0]!.resource;
  expect(resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "keel-test" } });
  const scopeSpans = bodies.flatMap((body) => body.resourceSpans.flatMap((resourceSpans) => resourceSpans.scopeSpans));
  expect(new Set(scopeSpans.map((scope) => scope.scope.name))).toEqual(new Set([KEEL_OTEL_SCOPE]));
  const received = scopeSpans.flatMap((scope) => scope.spans);
  expect(received.map((span) => span.name).sort()).toEqual(["execute_tool search", "invoke_agent engineer", "invoke_agent reviewer"]);

  const turn = received.find((span) => span.name === "invoke_agent engineer")!;
  const tool = received.find((span) => span.name === "execute_tool search")!;
  expect(tool.parentSpanId).toBe(turn.spanId);
  expect(tool.traceId).toBe(turn.traceId);
  expect(turn.kind).toBe(1); // OTLP's SPAN_KIND_INTERNAL
  expect(attribute(turn, "gen_ai.provider.name")).toBe("openai");
  expect(attribute(turn, "gen_ai.request.model")).toBe("gpt-5");
  expect(attribute(turn, "gen_ai.usage.input_tokens")).toBe(10);
  expect(attribute(turn, "gen_ai.usage.reasoning.output_tokens")).toBe(2);
  expect(attribute(turn, "gen_ai.usage.cache_creation.input_tokens")).toBeUndefined();
  expect(attribute(turn, "keel.session.action")).toBe("resumed");

  const failed = received.find((span) => span.name === "invoke_agent reviewer")!;
  expect(failed.status.code).toBe(2); // OTLP's STATUS_CODE_ERROR
  expect(attribute(failed, "error.type")).toBe("resume_failed");

  const payload = JSON.stringify(bodies);
  expect(payload).not.toContain("secret prompt text");
  expect(payload).not.toContain("secret answer text");
});

it("never fails or holds up a turn when the receiver is down", async () => {
  // A port that was just free: nothing listens there.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const deadUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/v1/traces`;
  await new Promise((resolve) => probe.close(resolve));

  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: deadUrl, timeoutMillis: 2_000 }), { scheduledDelayMillis: 1 })] });
  const bus = createEventBus();
  const otel = instrumentKeel(bus, { tracer: provider.getTracer(KEEL_OTEL_SCOPE) });
  const started = performance.now();
  for (let index = 0; index < 20; index += 1) {
    const result = await otel.traceTurn({ role: "engineer" }, async () => {
      bus.emit({ type: "agent.io.read", role: "engineer", missionId: null, path: `f${index}.ts`, bytes: 1, skill: null });
      await new Promise((resolve) => setTimeout(resolve, 5));
      return okAsync({ text: "ok" });
    });
    expect(result.isOk()).toBe(true);
  }
  const elapsed = performance.now() - started;
  // 20 turns of 5 ms each: the failing exports run beside them, not in them.
  expect(elapsed).toBeLessThan(1_000);
  otel.uninstrument();
  await provider.forceFlush().catch(() => undefined);
  await provider.shutdown().catch(() => undefined);
  expect(trace.getActiveSpan()).toBeUndefined();
});
