import { createOpenAI } from "@ai-sdk/openai";
import { addUsage } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { useTempDirs } from "@keel/testkit";
import { reportedUsage, startFakeProvider, type FakeProviderRequest, type FakeReply } from "@keel/testkit/provider";
import { openTranscript } from "@keel/transcript";
import { COMPACTION_SUMMARY_PREFIX } from "@keel/transcript/schemas";
import { expect, it } from "vitest";
import { createAiSdkBackend } from "./ai-sdk-backend.js";

const dirs = useTempDirs("keel-ai-sdk-compaction-");
const SUMMARY = "## Goal\nLearn about the letters.\n\n## Progress\nA and B were explained.\n\n## Next Steps\n1. Ask about C.";
const PREFIX_SUMMARY = "## Original Request\nWhat is B?";
const SUMMARY_USAGE = { inputUncached: 700, output: 40 };

/** The summary calls (Keel's summary prompt, no tools) are answered by their kind; the turns take the queue. */
function summaries(request: FakeProviderRequest): FakeReply | undefined {
  if (request.hasTools || !request.text.includes("<conversation>")) return undefined;
  return { text: request.text.includes("## Original Request") ? PREFIX_SUMMARY : SUMMARY, usage: SUMMARY_USAGE };
}

it("compacts a resumed thread near its window: the summary of the same model reaches the next request", async () => {
  const provider = (
    await startFakeProvider({
      replies: [
        { text: `A is ${"a".repeat(1200)}`, usage: { inputUncached: 10, output: 300 } },
        { text: `B is ${"b".repeat(1200)}`, usage: { inputUncached: 320, output: 300 } },
        { text: "C is c.", usage: { inputUncached: 400, output: 5 } },
      ],
      respond: summaries,
    })
  )._unsafeUnwrap();
  try {
    const store = createMemoryStore();
    const backend = createAiSdkBackend({
      model: createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).chat("fake-model"),
      store,
      maxRetries: 0,
      compaction: { contextWindow: 600, reserveTokens: 100, keepRecentTokens: 50 },
    });
    const cwd = dirs.dir();
    const first = (await backend.runTurn({ prompt: "What is A?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    const threadId = first.threadId!;
    const second = await backend.runTurn({ prompt: "What is B?", cwd, timeoutMs: 30_000, threadId });
    expect(second.isOk(), second.isErr() ? `${second.error.code}: ${second.error.message}` : "").toBe(true);
    expect(provider.modelRequests()).toHaveLength(2); // still within the window: no summary call
    const turn = await backend.runTurn({ prompt: "What is C?", cwd, timeoutMs: 30_000, threadId });
    if (turn.isErr()) throw new Error(`${turn.error.code}: ${turn.error.message}`);
    const third = turn.value;

    expect(provider.failures).toEqual([]);
    const requests = provider.modelRequests();
    const summaryCalls = requests.filter((request) => request.text.includes("<conversation>"));
    const turnCall = requests.at(-1);
    expect(summaryCalls.length).toBeGreaterThanOrEqual(1);
    expect(summaryCalls.map((request) => request.text).join("\n")).toContain("What is A?");
    expect(turnCall!.text).toContain(COMPACTION_SUMMARY_PREFIX.split("\n")[0]);
    expect(turnCall!.text).toContain("## Next Steps");
    expect(turnCall!.text).not.toContain("What is A?");
    expect(turnCall!.text).toContain("What is C?");
    expect(third.text).toBe("C is c.");
    // The turn pays for its summary call.
    const summaryUsage = summaryCalls.map(() => reportedUsage("openai-chat", SUMMARY_USAGE)).reduce(addUsage);
    expect(third.usage).toEqual(addUsage(summaryUsage, reportedUsage("openai-chat", { inputUncached: 400, output: 5 })));
    const transcript = (await openTranscript({ store, sessionId: threadId, create: false }))._unsafeUnwrap();
    expect(transcript.path()._unsafeUnwrap().filter((entry) => entry.type === "compaction")).toHaveLength(1);
  } finally {
    await provider.close();
  }
});

it("fails the turn with the summary call's retryable error, appending nothing", async () => {
  const provider = (await startFakeProvider({ replies: [{ text: "x".repeat(4000) }, { error: { status: 529 } }] }))._unsafeUnwrap();
  try {
    const store = createMemoryStore();
    const backend = createAiSdkBackend({
      model: createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).chat("fake-model"),
      store,
      maxRetries: 0,
      compaction: { contextWindow: 600, reserveTokens: 100, keepRecentTokens: 50 },
    });
    const cwd = dirs.dir();
    const first = (await backend.runTurn({ prompt: "Tell me everything", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    const error = (await backend.runTurn({ prompt: "More", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrapErr();
    expect(error.code).toBe("backend_failed");
    expect(error.retryable).toBe(true);
    expect(error.details).toMatchObject({ statusCode: 529, threadId: first.threadId });
    const transcript = (await openTranscript({ store, sessionId: first.threadId!, create: false }))._unsafeUnwrap();
    expect(transcript.buildContext()._unsafeUnwrap().messages.map((message) => message.role)).toEqual(["user", "assistant"]);
  } finally {
    await provider.close();
  }
});
