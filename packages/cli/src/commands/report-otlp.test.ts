import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createScriptedBackend } from "@keel/backends/scripted";
import { runCli } from "@keel/cli";
import { createEventBus } from "@keel/core";
import { createKeel } from "@keel/runtime";
import { createJsonlEventSink, readEventsJsonl } from "@keel/telemetry";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { captureIo, hasStackTrace, temporaryDirectory } from "../../../../test/support/cli-harness.js";

interface OtlpValue { stringValue?: string; intValue?: number | string; boolValue?: boolean }
interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; startTimeUnixNano: string; endTimeUnixNano: string; attributes: { key: string; value: OtlpValue }[]; status: { code?: number }; events?: { name: string }[] }
interface OtlpBody { resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[] }

const MARKER = "MARKER-cli-otlp-3b8";

/** A loopback OTLP/HTTP receiver keeping each JSON body posted to it, with the path it came to. */
const received: { path: string | undefined; body: OtlpBody }[] = [];
let server: Server;
let origin = "";
beforeAll(async () => {
  server = createServer((request, response) => {
    let text = "";
    request.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    request.on("end", () => {
      received.push({ path: request.url, body: JSON.parse(text) as OtlpBody });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

let scratch: { dir: string; remove: () => void };
beforeEach(() => {
  scratch = temporaryDirectory("report-otlp");
  received.length = 0;
});
afterEach(() => scratch.remove());

/** An events file from the real runtime and JSONL sink: three turns, a fourth refused by the call budget. */
async function writeLog(): Promise<string> {
  const file = path.join(scratch.dir, "events.jsonl");
  const events = createEventBus();
  const sink = createJsonlEventSink({ file });
  const detach = sink.attach(events);
  const keel = createKeel({
    dir: path.join(scratch.dir, "store"),
    cwd: scratch.dir,
    events,
    backends: [createScriptedBackend({ resumable: true, script: (turn) => `Decision: step ${turn.call} ${MARKER}\nInspected: src/app.ts` })],
    policy: "rolling",
    budget: { mission: { calls: 3 } },
  });
  for (const step of [1, 2, 3, 4]) await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: `Step ${step} ${MARKER}` });
  await keel.close();
  detach();
  (await sink.close())._unsafeUnwrap();
  return file;
}

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  return value === undefined ? undefined : (value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue));
};

describe("keel report --otlp", () => {
  it("sends the log's turns as OTLP/HTTP spans with the events' own times, then reports as usual", async () => {
    const file = await writeLog();
    const io = captureIo({ cwd: scratch.dir, env: { OTEL_SERVICE_NAME: "keel-ci" } });
    // A bare origin gets the standard traces path.
    const code = await runCli(["report", "events.jsonl", "--otlp", origin], io);
    expect(io.err).toMatch(/^sent \d+ spans \(3 turns, \d+ events\) to http:\/\/127\.0\.0\.1:\d+\/v1\/traces\n$/);
    expect(code).toBe(0);
    expect(io.out).toContain("rolling");

    expect(received.length).toBeGreaterThan(0);
    expect(received.every((request) => request.path === "/v1/traces")).toBe(true);
    const resource = received[0]!.body.resourceSpans[0]!.resource;
    expect(resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "keel-ci" } });
    const spans = received.flatMap((request) => request.body.resourceSpans.flatMap((resourceSpans) => resourceSpans.scopeSpans.flatMap((scope) => scope.spans)));
    expect(io.err).toContain(`sent ${spans.length} spans`);

    const read = (await readEventsJsonl(file))._unsafeUnwrap();
    const turnEvents = read.events.filter((event) => event.type === "role.session.turn");
    const turns = spans.filter((span) => span.name === "invoke_agent engineer");
    expect(turns.map((span) => attribute(span, "keel.session.action"))).toEqual(["fresh", "resumed", "resumed"]);
    turns.forEach((span, index) => {
      const event = turnEvents[index]!;
      if (event.type !== "role.session.turn") throw new Error("not a turn");
      expect(BigInt(span.endTimeUnixNano)).toBe(BigInt(event.at) * 1_000_000n);
      expect(BigInt(span.startTimeUnixNano)).toBe(BigInt(event.at - event.wallMs) * 1_000_000n);
      expect(span.events?.map((item) => item.name)).toEqual(expect.arrayContaining(["budget.reserved", "budget.settled"]));
      const reads = spans.filter((child) => child.name === "execute_tool read" && child.parentSpanId === span.spanId);
      expect(reads.map((child) => attribute(child, "keel.io.path"))).toEqual(["src/app.ts"]);
      expect(reads[0]!.traceId).toBe(span.traceId);
    });
    const refused = spans.filter((span) => span.name === "budget.refused");
    expect(refused).toHaveLength(1);
    expect(refused[0]!.status.code).toBe(2); // OTLP's STATUS_CODE_ERROR
    expect(attribute(refused[0]!, "error.type")).toBe("budget_exceeded");
    expect(JSON.stringify(received)).not.toContain(MARKER);
  });

  it("fails with exit 1 and one line when the receiver cannot be reached, and 2 on a URL that is not http(s)", async () => {
    await writeLog();
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const dead = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/v1/traces`;
    await new Promise((resolve) => probe.close(resolve));

    const down = captureIo({ cwd: scratch.dir });
    expect(await runCli(["report", "events.jsonl", "--otlp", dead], down)).toBe(1);
    expect(down.err).toMatch(/^error \(unavailable\): the OTLP receiver at http:\/\/127\.0\.0\.1:\d+\/v1\/traces did not take the spans: .+\n$/);
    expect(hasStackTrace(down.err)).toBe(false);
    expect(down.out).toBe("");

    for (const url of ["ftp://collector/v1/traces", "not a url"]) {
      const bad = captureIo({ cwd: scratch.dir });
      expect(await runCli(["report", "events.jsonl", "--otlp", url], bad)).toBe(2);
      expect(bad.err).toMatch(/^error: --otlp needs an http\(s\) URL/);
    }
  });
});
