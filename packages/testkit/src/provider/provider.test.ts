import { request as httpRequest } from "node:http";
import { KeelError } from "@keel/core";
import { afterEach, describe, expect, it } from "vitest";
import { reportedUsage, startFakeProvider, type FakeProvider, type FakeProviderOptions } from "./index.js";

const open: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((provider) => provider.close()));
});

async function start(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const provider = (await startFakeProvider(options))._unsafeUnwrap();
  open.push(provider);
  return provider;
}

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** The `data:` payloads of an SSE body (with their event names). */
async function sse(response: Response): Promise<{ event: string | undefined; data: unknown }[]> {
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame.trim() !== "")
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? "";
      return { event, data: data === "[DONE]" ? data : (JSON.parse(data) as unknown) };
    });
}

const usage = { inputUncached: 80, cacheRead: 20, cacheWrite: 5, output: 12, reasoning: 4 };
const tool = { id: "call_1", name: "bash", arguments: { command: "ls" } };

describe("Anthropic Messages", () => {
  it("answers plain JSON with text, tool use and the three input buckets", async () => {
    const provider = await start({ replies: [{ text: "hello", toolCalls: [tool], usage }] });
    const response = await post(`${provider.url}/v1/messages?beta=true`, { model: "claude-x", messages: [{ role: "user", content: "hi there" }], tools: [{ name: "bash" }] });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.content).toEqual([{ type: "text", text: "hello" }, { type: "tool_use", id: "call_1", name: "bash", input: { command: "ls" } }]);
    expect(body.stop_reason).toBe("tool_use");
    expect(body.usage).toEqual({ input_tokens: 80, cache_creation_input_tokens: 5, cache_read_input_tokens: 20, output_tokens: 12 });
    const [recorded] = provider.modelRequests();
    expect(recorded).toMatchObject({ format: "anthropic-messages", model: "claude-x", stream: false, hasTools: true, path: "/v1/messages", query: { beta: "true" } });
    expect(recorded?.text).toContain("hi there");
    expect(provider.failures).toEqual([]);
  });

  it("streams message_start … message_stop with text and input_json deltas", async () => {
    const provider = await start({ replies: [{ text: "streamed", toolCalls: [{ name: "Read", arguments: { file_path: "a.txt" } }], usage }] });
    const frames = await sse(await post(`${provider.url}/v1/messages`, { model: "m", stream: true, messages: [] }));
    expect(frames.map((frame) => frame.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(frames[0]?.data).toMatchObject({ message: { usage: { input_tokens: 80, cache_read_input_tokens: 20, cache_creation_input_tokens: 5 } } });
    expect(frames[2]?.data).toMatchObject({ delta: { type: "text_delta", text: "streamed" } });
    expect(frames[4]?.data).toMatchObject({ content_block: { type: "tool_use", name: "Read", input: {} } });
    expect(JSON.parse((frames[5]?.data as { delta: { partial_json: string } }).delta.partial_json)).toEqual({ file_path: "a.txt" });
    expect(frames[7]?.data).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: 12 } });
  });

  it("answers a 529 as overloaded_error with retry-after", async () => {
    const provider = await start({ replies: [{ error: { status: 529, retryAfterSeconds: 3 } }] });
    const response = await post(`${provider.url}/v1/messages`, { model: "m", messages: [] });
    expect(response.status).toBe(529);
    expect(response.headers.get("retry-after")).toBe("3");
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
  });
});

describe("OpenAI Chat Completions", () => {
  it("answers plain JSON with text, tool calls and cached prompt tokens", async () => {
    const provider = await start({ replies: [{ text: "hi", toolCalls: [tool], usage }] });
    const body = (await (await post(`${provider.openAiUrl}/chat/completions`, { model: "fake-model", messages: [{ role: "user", content: "q" }] })).json()) as {
      choices: { message: Record<string, unknown>; finish_reason: string }[];
      usage: unknown;
    };
    expect(body.choices[0]?.message).toEqual({ role: "assistant", content: "hi", tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } }] });
    expect(body.choices[0]?.finish_reason).toBe("tool_calls");
    expect(body.usage).toEqual({ prompt_tokens: 105, completion_tokens: 12, total_tokens: 117, prompt_tokens_details: { cached_tokens: 20 }, completion_tokens_details: { reasoning_tokens: 4 } });
  });

  it("streams deltas, tool call chunks, a usage chunk and [DONE]", async () => {
    const provider = await start({ replies: [{ text: "a" }, { toolCalls: [tool, { name: "read", arguments: { path: "x" } }] }] });
    const text = await sse(await post(`${provider.openAiUrl}/chat/completions`, { model: "m", stream: true, messages: [] }));
    expect(text.at(-1)?.data).toBe("[DONE]");
    expect(text[0]?.data).toMatchObject({ choices: [{ delta: { content: "a" } }] });
    expect(text.at(-2)?.data).toMatchObject({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 10 } });
    const tools = await sse(await post(`${provider.openAiUrl}/chat/completions`, { model: "m", stream: true, messages: [] }));
    expect(tools[1]?.data).toMatchObject({ choices: [{ delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "bash" } }] } }] });
    expect(tools[2]?.data).toMatchObject({ choices: [{ delta: { tool_calls: [{ index: 1, id: "call_1_1", function: { name: "read", arguments: '{"path":"x"}' } }] } }] });
    expect(tools[3]?.data).toMatchObject({ choices: [{ finish_reason: "tool_calls" }] });
  });

  it("answers a 429 in OpenAI's error body", async () => {
    const provider = await start({ replies: [{ error: { status: 429, message: "slow down" } }] });
    const response = await post(`${provider.openAiUrl}/chat/completions`, { model: "m", messages: [] });
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({ error: { message: "slow down", type: "rate_limit_exceeded", code: "rate_limit_exceeded", param: null } });
  });
});

describe("OpenAI Responses", () => {
  it("answers plain JSON with a message item, a function_call item and usage details", async () => {
    const provider = await start({ replies: [{ text: "t", toolCalls: [tool], usage }] });
    const body = (await (await post(`${provider.openAiUrl}/responses`, { model: "gpt-5.5", input: [{ role: "user", content: "q" }] })).json()) as Record<string, unknown>;
    expect(body.status).toBe("completed");
    expect(body.output).toMatchObject([
      { type: "message", content: [{ type: "output_text", text: "t" }] },
      { type: "function_call", call_id: "call_1", name: "bash", arguments: '{"command":"ls"}' },
    ]);
    expect(body.usage).toEqual({ input_tokens: 105, input_tokens_details: { cached_tokens: 20 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 4 }, total_tokens: 117 });
  });

  it("streams named events ending in response.completed with usage", async () => {
    const provider = await start({ replies: [{ text: "t", toolCalls: [tool], usage }] });
    const frames = await sse(await post(`${provider.openAiUrl}/responses`, { model: "gpt-5.5", stream: true, input: [] }));
    expect(frames.map((frame) => frame.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(frames.every((frame) => (frame.data as { type: string }).type === frame.event)).toBe(true);
    expect(frames[11]?.data).toMatchObject({ item: { type: "function_call", call_id: "call_1", name: "bash" } });
    expect(frames[12]?.data).toMatchObject({ response: { usage: { input_tokens: 105, output_tokens: 12 } } });
  });
});

describe("Gemini", () => {
  it("answers generateContent with text, a functionCall and usageMetadata", async () => {
    const provider = await start({ replies: [{ text: "g", toolCalls: [{ name: "read_file", arguments: { absolute_path: "/x" } }], usage }] });
    const body = (await (await post(`${provider.url}/v1beta/models/gemini-2.5-flash:generateContent`, { contents: [{ role: "user", parts: [{ text: "q" }] }] })).json()) as Record<string, unknown>;
    expect(body.candidates).toMatchObject([{ content: { role: "model", parts: [{ text: "g" }, { functionCall: { name: "read_file", args: { absolute_path: "/x" } } }] }, finishReason: "STOP" }]);
    expect(body.usageMetadata).toEqual({ promptTokenCount: 105, candidatesTokenCount: 8, totalTokenCount: 117, cachedContentTokenCount: 20, thoughtsTokenCount: 4 });
    expect(provider.modelRequests()[0]).toMatchObject({ format: "gemini", model: "gemini-2.5-flash", stream: false });
  });

  it("streams with alt=sse and answers a JSON array without it", async () => {
    const provider = await start({ replies: [{ text: "s" }, { text: "arr" }] });
    const frames = await sse(await post(`${provider.url}/v1beta/models/m:streamGenerateContent?alt=sse`, { contents: [] }));
    expect(frames).toMatchObject([{ data: { candidates: [{ content: { parts: [{ text: "s" }] } }], usageMetadata: { promptTokenCount: 100 } } }]);
    const array = (await (await post(`${provider.url}/v1beta/models/m:streamGenerateContent`, { contents: [] })).json()) as unknown[];
    expect(array).toMatchObject([{ candidates: [{ content: { parts: [{ text: "arr" }] } }] }]);
    expect(provider.modelRequests().map((request) => request.stream)).toEqual([true, true]);
  });

  it("answers a 503 as UNAVAILABLE", async () => {
    const provider = await start({ replies: [{ error: { status: 503 } }] });
    const response = await post(`${provider.url}/v1beta/models/m:generateContent`, { contents: [] });
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ error: { code: 503, message: "fake provider error 503", status: "UNAVAILABLE" } });
  });
});

describe("scripting and recording", () => {
  it("asks respond first, then the queue, and records what each call was answered", async () => {
    const provider = await start({
      replies: [{ text: "queued" }],
      respond: (request) => (request.hasTools ? undefined : { text: "Title" }),
    });
    const title = (await (await post(`${provider.openAiUrl}/chat/completions`, { model: "m", messages: [] })).json()) as { choices: { message: { content: string } }[] };
    const turn = (await (await post(`${provider.openAiUrl}/chat/completions`, { model: "m", messages: [], tools: [{ type: "function" }] })).json()) as typeof title;
    expect([title.choices[0]?.message.content, turn.choices[0]?.message.content]).toEqual(["Title", "queued"]);
    expect(provider.modelRequests().map((request) => request.reply)).toEqual([{ text: "Title" }, { text: "queued" }]);
    expect(provider.pendingReplies()).toBe(0);
  });

  it("keeps the earlier messages of a resumed conversation searchable", async () => {
    const provider = await start({ replies: [{ text: "second" }] });
    await post(`${provider.openAiUrl}/responses`, {
      model: "m",
      instructions: "system words",
      input: [
        { role: "user", content: [{ type: "input_text", text: "first question" }] },
        { role: "assistant", content: [{ type: "output_text", text: "first answer" }] },
        { type: "function_call_output", call_id: "c", output: "README.md\npackage.json" },
      ],
      tools: [{ type: "function", name: "secret_tool_description" }],
    });
    const text = provider.modelRequests()[0]?.text ?? "";
    expect(text).toContain("first answer");
    expect(text).toContain("README.md");
    expect(text).toContain("system words");
    expect(text).not.toContain("secret_tool_description");
  });

  it("waits delayMs before answering", async () => {
    const provider = await start({ replies: [{ text: "late", delayMs: 300 }] });
    const started = Date.now();
    await (await post(`${provider.openAiUrl}/chat/completions`, { model: "m", messages: [] })).json();
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it("hangs until the client gives up, and close() drops the hung connection", async () => {
    const provider = await start({ replies: [{ hang: true }] });
    const controller = new AbortController();
    const pending = fetch(`${provider.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "m", messages: [] }), signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(provider.modelRequests()[0]?.reply).toEqual({ hang: true });
    expect(provider.openConnections()).toBeGreaterThan(0);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await provider.close();
    expect(provider.openConnections()).toBe(0);
  });

  it("answers an unscripted model call with 500 and an unknown route with 404, both recorded as failures", async () => {
    const provider = await start();
    expect((await post(`${provider.openAiUrl}/chat/completions`, { model: "m", messages: [] })).status).toBe(500);
    expect((await fetch(`${provider.url}/v2/whatever`)).status).toBe(404);
    expect((await post(`${provider.openAiUrl}/responses`, [1, 2])).status).toBe(400);
    expect(provider.failures.map((failure) => [failure.kind, failure.target])).toEqual([
      ["unscripted", "/v1/chat/completions"],
      ["unknown_route", "/v2/whatever"],
      ["bad_request", "/v1/responses"],
    ]);
  });

  it("serves the probes a CLI makes without counting them as model calls or failures", async () => {
    const provider = await start({ models: ["a", "b"] });
    expect((await fetch(provider.url, { method: "HEAD" })).status).toBe(200);
    const list = (await (await fetch(`${provider.openAiUrl}/models`)).json()) as { data: { id: string }[] };
    expect(list.data.map((model) => model.id)).toEqual(["a", "b"]);
    expect(await (await post(`${provider.url}/v1/messages/count_tokens`, { messages: [{ role: "user", content: "12345678" }] })).json()).toEqual({ input_tokens: 4 });
    expect(provider.modelRequests()).toEqual([]);
    expect(provider.requests).toHaveLength(3);
    expect(provider.failures).toEqual([]);
  });

  it("rejects an invalid script with invalid_input, at start and when queued", async () => {
    expect(() => startFakeProvider({ replies: [{}] as never })).toThrow(KeelError);
    const provider = await start();
    try {
      provider.enqueue({ usage: { inputUncached: 1, output: 1, reasoning: 2 }, text: "x" });
      expect.unreachable("enqueue accepted reasoning above output");
    } catch (error) {
      expect(KeelError.is(error, "invalid_input")).toBe(true);
    }
  });

  it("records an invalid reply from respond as bad_script", async () => {
    const provider = await start({ respond: () => ({ hang: false }) as never });
    expect((await post(`${provider.openAiUrl}/chat/completions`, { model: "m", messages: [] })).status).toBe(500);
    expect(provider.failures.map((failure) => failure.kind)).toEqual(["bad_script"]);
  });
});

describe("reportedUsage", () => {
  it("maps the script's buckets to what each wire format can report", () => {
    expect(reportedUsage("anthropic-messages", usage)).toEqual({ inputUncached: 80, cacheRead: 20, cacheWrite: 5, output: 12, reasoning: null, costUsd: null });
    for (const format of ["openai-chat", "openai-responses", "gemini"] as const) {
      expect(reportedUsage(format, usage)).toEqual({ inputUncached: 85, cacheRead: 20, cacheWrite: null, output: 8, reasoning: 4, costUsd: null });
    }
  });
});

describe("the refusing proxy", () => {
  function rawRequest(provider: FakeProvider, options: { method: string; path: string; headers?: Record<string, string> }): Promise<number> {
    const { port, hostname } = new URL(provider.url);
    return new Promise((resolve, reject) => {
      const request = httpRequest({ host: hostname, port, method: options.method, path: options.path, headers: options.headers ?? {} });
      request.on("connect", (response, socket) => {
        socket.destroy();
        resolve(response.statusCode ?? 0);
      });
      request.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("error", reject);
      request.end();
    });
  }

  it("refuses and records a CONNECT tunnel to an outside host", async () => {
    const provider = await start();
    expect(await rawRequest(provider, { method: "CONNECT", path: "api.anthropic.com:443", headers: { host: "api.anthropic.com:443" } })).toBe(403);
    expect(provider.failures).toMatchObject([{ kind: "outside_host", method: "CONNECT", target: "api.anthropic.com:443" }]);
  });

  it("refuses and records an absolute-URI request for an outside host", async () => {
    const provider = await start();
    expect(await rawRequest(provider, { method: "GET", path: "http://registry.npmjs.org/opencode", headers: { host: "registry.npmjs.org" } })).toBe(403);
    expect(provider.failures).toMatchObject([{ kind: "outside_host", method: "GET", target: "http://registry.npmjs.org/opencode" }]);
  });

  it("serves an absolute-URI request for itself (a client that proxies loopback too)", async () => {
    const provider = await start({ replies: [{ text: "via proxy" }] });
    const status = await new Promise<number>((resolve, reject) => {
      const { port, hostname } = new URL(provider.url);
      const request = httpRequest({ host: hostname, port, method: "POST", path: `${provider.openAiUrl}/chat/completions`, headers: { "content-type": "application/json" } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("error", reject);
      request.end(JSON.stringify({ model: "m", messages: [] }));
    });
    expect(status).toBe(200);
    expect(provider.modelRequests()[0]?.reply).toEqual({ text: "via proxy" });
    expect(provider.failures).toEqual([]);
  });

  it("gives the environment that sends outside traffic to it and loopback direct", async () => {
    const provider = await start();
    expect(provider.proxyEnv()).toMatchObject({ HTTPS_PROXY: provider.url, https_proxy: provider.url, NO_PROXY: "127.0.0.1,localhost,::1" });
  });
});
