import { writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { BackendTurnEvent } from "@keel/backend";
import { addUsage, type KeelError } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { useTempDirs } from "@keel/testkit";
import { reportedUsage, startFakeProvider, type FakeProvider, type FakeProviderFormat, type FakeReply } from "@keel/testkit/provider";
import { openTranscript } from "@keel/transcript";
import { tool, type LanguageModel } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAiSdkBackend } from "./ai-sdk-backend.js";

const dirs = useTempDirs("keel-ai-sdk-");
const providers: FakeProvider[] = [];
afterEach(async () => {
  for (const provider of providers.splice(0)) await provider.close();
});

async function fakeProvider(replies: FakeReply[] = []): Promise<FakeProvider> {
  const provider = (await startFakeProvider({ replies }))._unsafeUnwrap();
  providers.push(provider);
  return provider;
}

/** The host's tool: reads a file of the turn's directory. */
function readTool(cwd: string) {
  return tool({
    description: "Read a file",
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => readFile(join(cwd, path), "utf8"),
  });
}

interface ProviderCase {
  name: string;
  format: FakeProviderFormat;
  model(provider: FakeProvider): LanguageModel;
  /** The conversation part of a request body, for the byte-for-byte comparison. */
  conversation(body: Record<string, unknown>): unknown[];
}

const CASES: ProviderCase[] = [
  {
    name: "OpenAI Chat Completions",
    format: "openai-chat",
    model: (provider) => createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).chat("fake-model"),
    conversation: (body) => body.messages as unknown[],
  },
  {
    name: "openai-compatible",
    format: "openai-chat",
    model: (provider) => createOpenAICompatible({ name: "fake", baseURL: provider.openAiUrl, apiKey: "test", includeUsage: true }).chatModel("fake-model"),
    conversation: (body) => body.messages as unknown[],
  },
  {
    name: "OpenAI Responses",
    format: "openai-responses",
    model: (provider) => createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).responses("fake-model"),
    conversation: (body) => body.input as unknown[],
  },
  {
    name: "Anthropic Messages",
    format: "anthropic-messages",
    model: (provider) => createAnthropic({ baseURL: `${provider.url}/v1`, apiKey: "test" })("fake-model"),
    conversation: (body) => body.messages as unknown[],
  },
];

const TOOL_USAGE = { inputUncached: 600, cacheRead: 200, cacheWrite: 30, output: 20, reasoning: 5 };
const TEXT_USAGE = { inputUncached: 700, cacheRead: 100, output: 9 };

describe.each(CASES)("createAiSdkBackend with $name", (providerCase) => {
  it("keeps a thread with a tool call across a restart: the next request carries the first turn byte for byte", async () => {
    const cwd = dirs.dir();
    const storeDir = dirs.dir();
    writeFileSync(join(cwd, "notes.txt"), "hello from notes");
    const provider = await fakeProvider([
      { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "notes.txt" } }], usage: TOOL_USAGE },
      { text: "The notes say hello.", usage: TEXT_USAGE },
      { text: "Nothing else.", usage: { inputUncached: 50, output: 3 } },
    ]);
    const options = {
      model: providerCase.model(provider),
      tools: { read: readTool(cwd) },
      system: "You are terse.",
      maxRetries: 0,
      toolFileAccess: { read: { op: "read" as const, pathArgument: "path" } },
    };
    const firstStore = createFsStore({ dir: storeDir });
    const first = (await createAiSdkBackend({ ...options, store: firstStore }).runTurn({ prompt: "What do the notes say?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    await firstStore.close();
    expect(first.text).toBe("The notes say hello.");
    expect(first.toolCalls).toBe(1);
    expect(first.fileAccess).toEqual([{ op: "read", path: "notes.txt", bytes: 16, tool: "read" }]);
    expect(first.usage).toEqual(addUsage(reportedUsage(providerCase.format, TOOL_USAGE), reportedUsage(providerCase.format, TEXT_USAGE)));
    expect(first.exitCode).toBeNull();

    // A "restart": a new backend over a new store instance on the same directory.
    const secondStore = dirs.track(createFsStore({ dir: storeDir }));
    const second = (
      await createAiSdkBackend({ ...options, store: secondStore }).runTurn({ prompt: "Anything else?", cwd, timeoutMs: 30_000, threadId: first.threadId! })
    )._unsafeUnwrap();
    expect(second.threadId).toBe(first.threadId);
    expect(second.text).toBe("Nothing else.");
    expect(second.toolCalls).toBe(0);
    expect(second.usage).toEqual(reportedUsage(providerCase.format, { inputUncached: 50, output: 3 }));

    expect(provider.failures).toEqual([]);
    const [, lastOfFirst, resumed] = provider.modelRequests();
    const before = providerCase.conversation(lastOfFirst!.body as Record<string, unknown>);
    const after = providerCase.conversation(resumed!.body as Record<string, unknown>);
    // Byte for byte: what the first turn's last call sent, then its answer, then the new prompt.
    expect(JSON.stringify(after.slice(0, before.length))).toBe(JSON.stringify(before));
    expect(after).toHaveLength(before.length + 2);
    expect(JSON.stringify(after[before.length])).toContain("The notes say hello.");
    expect(JSON.stringify(after.at(-1))).toContain("Anything else?");
    expect(resumed!.text).toContain("hello from notes");
    if (providerCase.format === "openai-responses") {
      expect((resumed!.body as Record<string, unknown>).store).toBe(false);
      expect(JSON.stringify(after)).not.toContain("item_reference");
    }

    // The transcript holds the thread in pi's shape: Keel's own tools read it.
    const transcript = (await openTranscript({ store: secondStore, sessionId: first.threadId!, create: false }))._unsafeUnwrap();
    const roles = transcript.buildContext()._unsafeUnwrap().messages.map((message) => message.role);
    expect(roles).toEqual(["user", "assistant", "toolResult", "assistant", "user", "assistant"]);
  });

  it("streams an observed turn: text deltas, the tool call and its file access as they come, and the same result and thread as unobserved", async () => {
    const cwd = dirs.dir();
    writeFileSync(join(cwd, "notes.txt"), "hello from notes");
    const replies: FakeReply[] = [
      { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "notes.txt" } }], usage: TOOL_USAGE },
      { text: "The notes say hello.", usage: TEXT_USAGE },
    ];
    const provider = await fakeProvider([...replies, ...replies]);
    const options = { model: providerCase.model(provider), tools: { read: readTool(cwd) }, maxRetries: 0, toolFileAccess: { read: { op: "read" as const, pathArgument: "path" } } };
    const store = createMemoryStore();
    const events: BackendTurnEvent[] = [];
    let toolRan = -1;
    const tools = {
      read: tool({
        description: "Read a file",
        inputSchema: z.object({ path: z.string() }),
        execute: async ({ path }) => {
          toolRan = events.length;
          return readFile(join(cwd, path), "utf8");
        },
      }),
    };
    const observed = (await createAiSdkBackend({ ...options, tools, store }).runTurn({ prompt: "What do the notes say?", cwd, timeoutMs: 30_000 }, undefined, (event) => events.push(event)))._unsafeUnwrap();
    const unobserved = (await createAiSdkBackend({ ...options, store }).runTurn({ prompt: "What do the notes say?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    const { threadId: _a, durationMs: _b, ...observedRest } = observed;
    const { threadId: _c, durationMs: _d, ...unobservedRest } = unobserved;
    expect(observedRest).toEqual(unobservedRest);
    expect(observed.fileAccess).toEqual([{ op: "read", path: "notes.txt", bytes: 16, tool: "read" }]);
    const kinds = events.map((event) => event.type);
    expect(kinds.slice(0, 2)).toEqual(["tool_call", "file_access"]);
    expect(events[1]).toMatchObject({ type: "file_access", access: { op: "read", path: "notes.txt", tool: "read" } });
    // The tool ran (whether before or after its call was reported is the stream's scheduling,
    // which differs between Node versions); the text came after, as deltas that add up to the answer.
    expect(toolRan).toBeGreaterThanOrEqual(0);
    expect(kinds.slice(2).every((kind) => kind === "text")).toBe(true);
    expect(events.map((event) => (event.type === "text" ? event.text : "")).join("")).toBe("The notes say hello.");
    // The thread stored is the same, message for message, whether observed or not.
    const messages = async (threadId: string) =>
      (await openTranscript({ store, sessionId: threadId, create: false }))._unsafeUnwrap().buildContext()._unsafeUnwrap().messages.map((message) => message.role);
    expect(await messages(observed.threadId!)).toEqual(await messages(unobserved.threadId!));
    expect(provider.failures).toEqual([]);
  });

  it("maps a provider 529 the same when the turn is observed (streamed)", async () => {
    const provider = await fakeProvider([{ error: { status: 529 } }]);
    const events: BackendTurnEvent[] = [];
    const failed = (await createAiSdkBackend({ model: providerCase.model(provider), store: createMemoryStore(), maxRetries: 0 }).runTurn({ prompt: "one", cwd: dirs.dir(), timeoutMs: 30_000 }, undefined, (event) => events.push(event)))._unsafeUnwrapErr();
    expect(failed.code).toBe("backend_failed");
    expect(failed.retryable).toBe(true);
    expect(failed.details).toMatchObject({ backend: "ai-sdk", statusCode: 529 });
    expect(events).toEqual([]);
  });

  it.each([500, 529, 429])("reports a provider %i as a retryable backend_failed and keeps the thread as it was", async (status) => {
    const cwd = dirs.dir();
    const provider = await fakeProvider([{ text: "first" }, { error: { status } }]);
    const store = createMemoryStore();
    const backend = createAiSdkBackend({ model: providerCase.model(provider), store, maxRetries: 0 });
    const first = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    const failed = (await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrapErr() as KeelError;
    expect(failed.code).toBe("backend_failed");
    expect(failed.retryable).toBe(true);
    expect(failed.details).toMatchObject({ backend: "ai-sdk", threadId: first.threadId, statusCode: status });
    const transcript = (await openTranscript({ store, sessionId: first.threadId!, create: false }))._unsafeUnwrap();
    expect(transcript.buildContext()._unsafeUnwrap().messages).toHaveLength(2);
  });
});

describe("createAiSdkBackend", () => {
  const chat = (provider: FakeProvider) => createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).chat("fake-model");

  it("answers a 401 as a backend_failed that is not retryable", async () => {
    const provider = await fakeProvider([{ error: { status: 401, message: "bad key" } }]);
    const backend = createAiSdkBackend({ model: chat(provider), store: createMemoryStore(), maxRetries: 0 });
    const error = (await backend.runTurn({ prompt: "hi", cwd: dirs.dir(), timeoutMs: 30_000 }))._unsafeUnwrapErr();
    expect(error.code).toBe("backend_failed");
    expect(error.retryable).toBe(false);
  });

  it("aborts a hanging call on the caller's signal, and times out on timeoutMs", async () => {
    const provider = await fakeProvider([{ hang: true }, { hang: true }]);
    const backend = createAiSdkBackend({ model: chat(provider), store: createMemoryStore(), maxRetries: 0 });
    const controller = new AbortController();
    const running = backend.runTurn({ prompt: "hi", cwd: dirs.dir(), timeoutMs: 30_000 }, controller.signal);
    setTimeout(() => controller.abort(), 200);
    expect((await running)._unsafeUnwrapErr().code).toBe("aborted");
    const timedOut = (await backend.runTurn({ prompt: "hi", cwd: dirs.dir(), timeoutMs: 300 }))._unsafeUnwrapErr();
    expect(timedOut.code).toBe("timeout");
    expect(timedOut.details.threadId).toMatch(/\S/);
  });

  it("lets one of two concurrent turns on a thread win; the other is io_failed (conflict) and writes nothing", async () => {
    const provider = await fakeProvider([{ text: "first" }, { text: "a", delayMs: 50 }, { text: "b", delayMs: 50 }]);
    const store = createMemoryStore();
    const backend = createAiSdkBackend({ model: chat(provider), store, maxRetries: 0 });
    const cwd = dirs.dir();
    const threadId = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000 }))._unsafeUnwrap().threadId!;
    const results = await Promise.all([backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, threadId }), backend.runTurn({ prompt: "three", cwd, timeoutMs: 30_000, threadId })]);
    expect(results.filter((result) => result.isOk())).toHaveLength(1);
    const failed = results.find((result) => result.isErr())!._unsafeUnwrapErr();
    expect(failed.code).toBe("io_failed");
    expect(failed.details).toMatchObject({ storeCode: "conflict", threadId });
    const transcript = (await openTranscript({ store, sessionId: threadId, create: false }))._unsafeUnwrap();
    expect(transcript.buildContext()._unsafeUnwrap().messages).toHaveLength(4);
  });

  it("aborts an observed (streamed) turn on the caller's signal, and a throwing listener never breaks a turn", async () => {
    const provider = await fakeProvider([{ hang: true }, { text: "still fine" }]);
    const backend = createAiSdkBackend({ model: chat(provider), store: createMemoryStore(), maxRetries: 0 });
    const controller = new AbortController();
    const running = backend.runTurn({ prompt: "hi", cwd: dirs.dir(), timeoutMs: 30_000 }, controller.signal, () => undefined);
    setTimeout(() => controller.abort(), 200);
    expect((await running)._unsafeUnwrapErr().code).toBe("aborted");
    const fine = await backend.runTurn({ prompt: "hi", cwd: dirs.dir(), timeoutMs: 30_000 }, undefined, () => {
      throw new Error("observer bug");
    });
    expect(fine._unsafeUnwrap().text).toBe("still fine");
  });

  it("answers a thread the store does not hold with resume_failed", async () => {
    const provider = await fakeProvider();
    const backend = createAiSdkBackend({ model: chat(provider), store: createMemoryStore() });
    const error = (await backend.runTurn({ prompt: "hi", cwd: dirs.dir(), timeoutMs: 30_000, threadId: "no-such-thread" }))._unsafeUnwrapErr();
    expect(error.code).toBe("resume_failed");
    expect(error.details).toMatchObject({ threadId: "no-such-thread", resumeFailed: true });
    expect(provider.modelRequests()).toHaveLength(0);
  });

  it("keeps the host's own openai.store, and leaves other providers' options alone", async () => {
    const provider = await fakeProvider([{ text: "a" }, { text: "b" }]);
    const responses = createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).responses("fake-model");
    await createAiSdkBackend({ model: responses, store: createMemoryStore(), providerOptions: { openai: { store: true } } }).runTurn({ prompt: "hi", cwd: dirs.dir(), timeoutMs: 30_000 });
    await createAiSdkBackend({ model: chat(provider), store: createMemoryStore() }).runTurn({ prompt: "hi", cwd: dirs.dir(), timeoutMs: 30_000 });
    const [first, second] = provider.modelRequests();
    expect((first!.body as Record<string, unknown>).store).toBe(true);
    expect((second!.body as Record<string, unknown>).store).toBeUndefined();
  });

  it("refuses bad options with invalid_input at once", () => {
    const store = createMemoryStore();
    const bad: unknown[] = [
      {},
      { model: 42, store },
      { model: "openai/gpt-5" },
      { model: "openai/gpt-5", store, toolFileAccess: { read: { op: "open", pathArgument: "path" } } },
      { model: "openai/gpt-5", store, maxRetries: -1 },
      { model: "openai/gpt-5", store, id: "../x" },
      { model: "openai/gpt-5", store, unknown: true },
    ];
    for (const options of bad) {
      expect(() => createAiSdkBackend(options as never), JSON.stringify(options)).toThrow(expect.objectContaining({ code: "invalid_input" }));
    }
  });
});
