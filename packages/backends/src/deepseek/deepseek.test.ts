import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeBackendConformance, type BackendConformanceScenario } from "@keel/testkit/backend";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAiServer, type FakeOpenAiServer, type FakeReply, type FakeRequest } from "../__fixtures__/fake-openai-server.js";
import { createDeepSeekBackend } from "./index.js";

const USAGE = {
  prompt_tokens: 120,
  completion_tokens: 50,
  total_tokens: 170,
  prompt_cache_hit_tokens: 64,
  prompt_cache_miss_tokens: 56,
  completion_tokens_details: { reasoning_tokens: 20 },
};

function lastUserMessage(request: FakeRequest): string {
  const messages = request.body.messages as { role: string; content: string }[];
  return messages.at(-1)?.content ?? "";
}

/** Answers by the scenario marker at the start of the prompt. */
function scenarioReply(request: FakeRequest): FakeReply {
  const scenario = /^\[scenario:(\w+)\]/.exec(lastUserMessage(request))?.[1] ?? "success";
  switch (scenario as BackendConformanceScenario) {
    case "in_band_error":
      return { status: 200, body: { error: { message: "Content Exists Risk", type: "invalid_request_error" } } };
    case "garbage":
      return { raw: "<html><body>502 Bad Gateway</body></html>", contentType: "text/html" };
    case "hang":
      return { hang: true };
    case "unknown_events":
      return {
        raw: JSON.stringify({
          id: "x",
          object: "chat.completion",
          system_fingerprint: "fp_future",
          future_field: { nested: true },
          choices: [{ index: 0, message: { role: "assistant", content: "Done.", reasoning_content: "thinking" }, logprobs: null, finish_reason: "stop" }],
          usage: USAGE,
        }),
      };
    default:
      return { text: "Done.", usage: USAGE };
  }
}

describeBackendConformance({
  name: "deepseek (local OpenAI-compatible server)",
  resumable: false,
  // A chat completion shows no agent tool calls.
  toolCalls: "unknown",
  async setup() {
    const server = await startFakeOpenAiServer(scenarioReply);
    const cwd = await mkdtemp(join(tmpdir(), "keel-deepseek-"));
    return {
      backend: createDeepSeekBackend({ baseUrl: server.url, apiKey: "test-key" }),
      cwd,
      scenario: (scenario) => ({ prompt: `[scenario:${scenario}] Summarize the README.` }),
      cleanup: async () => {
        await server.close();
        await rm(cwd, { recursive: true, force: true });
      },
    };
  },
});

describe("deepseek adapter", () => {
  let server: FakeOpenAiServer;
  let reply: (request: FakeRequest) => FakeReply;
  beforeEach(async () => {
    reply = scenarioReply;
    server = await startFakeOpenAiServer((request) => reply(request));
  });
  afterEach(() => server.close());

  it("posts one chat completion with the system prompt, model and key, and maps the usage", async () => {
    const backend = createDeepSeekBackend({ baseUrl: `${server.url}/`, systemPrompt: "You are terse.", maxTokens: 512, temperature: 0 });
    const result = (await backend.runTurn({ prompt: "Hello", cwd: tmpdir(), timeoutMs: 10_000, model: "deepseek-reasoner", env: { DEEPSEEK_API_KEY: "k-1" } }))._unsafeUnwrap();
    expect(result).toMatchObject({ text: "Done.", threadId: null, exitCode: null });
    expect(result.usage).toEqual({ inputUncached: 56, cacheRead: 64, cacheWrite: null, output: 30, reasoning: 20, costUsd: null });
    const [sent] = server.requests;
    expect(sent!.path).toBe("/v1/chat/completions");
    expect(sent!.headers.authorization).toBe("Bearer k-1");
    expect(sent!.body).toEqual({
      model: "deepseek-reasoner",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Hello" },
      ],
      stream: false,
      max_tokens: 512,
      temperature: 0,
    });
  });

  it("is unavailable without an API key, and classifies HTTP failures", async () => {
    const keyless = createDeepSeekBackend({ baseUrl: server.url, apiKeyEnv: "KEEL_TEST_NO_SUCH_KEY" });
    const missing = (await keyless.runTurn({ prompt: "x", cwd: tmpdir(), timeoutMs: 10_000 }))._unsafeUnwrapErr();
    expect(missing.code).toBe("unavailable");
    expect(missing.retryable).toBe(false);

    const backend = createDeepSeekBackend({ baseUrl: server.url, apiKey: "k" });
    const cases: [FakeReply, string, boolean][] = [
      [{ status: 401, body: { error: { message: "Authentication Fails" } } }, "backend_failed", false],
      [{ status: 429, body: { error: { message: "Rate limit" } } }, "unavailable", true],
      [{ status: 503, body: { error: { message: "Server overloaded" } } }, "unavailable", true],
      [{ status: 422, body: { error: { message: "Invalid parameters" } } }, "backend_failed", false],
      [{ raw: JSON.stringify({ choices: [] }) }, "corrupt", false],
      [{ raw: JSON.stringify({ choices: [{ message: { content: "x" } }], usage: { prompt_tokens: -1 } }) }, "corrupt", false],
    ];
    for (const [answer, code, retryable] of cases) {
      reply = () => answer;
      const error = (await backend.runTurn({ prompt: "x", cwd: tmpdir(), timeoutMs: 10_000 }))._unsafeUnwrapErr();
      expect({ code: error.code, retryable: error.retryable }).toEqual({ code, retryable });
    }
  });

  it("is unavailable (retryable) when the server cannot be reached", async () => {
    await server.close();
    const backend = createDeepSeekBackend({ baseUrl: server.url, apiKey: "k" });
    const error = (await backend.runTurn({ prompt: "x", cwd: tmpdir(), timeoutMs: 10_000 }))._unsafeUnwrapErr();
    expect(error.code).toBe("unavailable");
    expect(error.retryable).toBe(true);
    server = await startFakeOpenAiServer(scenarioReply);
  });

  it("throws invalid_input at once for bad options", () => {
    expect(() => createDeepSeekBackend({ baseUrl: "not a url" })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(() => createDeepSeekBackend({ temperature: 9 })).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });
});
