/**
 * A durable, compacting, rotating thread for an AI SDK agent. The AI SDK keeps no thread: here
 * Keel keeps it, in a transcript on the filesystem store, so that a second process (another
 * worker, tomorrow) continues it with the first one's messages — tool calls and results
 * included — byte for byte; a thread near the model's window is compacted by Keel's transcript
 * (the older part summarized by the same model); and under the `rolling` policy the role's
 * session rotates to a new thread seeded from its capsule after three turns.
 *
 * It runs offline: the model is an OpenAI-compatible one pointed at Keel's fake provider
 * (`@keel/testkit/provider`), which plays the model. In your host it is `openai("gpt-5")`,
 * `anthropic("claude-sonnet-4-5")` or any other `LanguageModel`, and the rest stays as it is.
 * Run it from the repository: `node --import tsx --conditions=@keel/source examples/ai-sdk-thread/ai-sdk-thread.ts`
 * (its test, ai-sdk-thread.test.ts, checks what it returns).
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createAiSdkBackend } from "@keel/ai-sdk";
import { createKeel } from "@keel/runtime";
import type { RoleTurnResult } from "@keel/runtime";
import { createFsStore } from "@keel/store-fs";
import { startFakeProvider, type FakeProvider, type FakeProviderRequest, type FakeReply } from "@keel/testkit/provider";
import { tool, type LanguageModel } from "ai";
import { z } from "zod";

/** What the four turns of {@link runAiSdkThread} did, and what the model was sent. */
export interface AiSdkThreadRun {
  /** Each turn's session action: fresh, then (in a second process) resumed, resumed, rotated. */
  actions: string[];
  /** Each turn's thread (a transcript's session id). */
  threadIds: string[];
  /** Whether the second process's first request carried the first turn's tool result (the notes), as it was. */
  restartCarriedToolResult: boolean;
  /** The third turn's summary calls, and whether its request carried the summary instead of the old messages. */
  compaction: { summaryCalls: number; summaryReachedTurn: boolean };
  /** Whether the rotated thread's first request held the capsule (the last decision) and nothing of the old thread. */
  rotatedFromCapsule: boolean;
  /** The files the agent's tool read, as Keel's `fileAccess` reported them. */
  reads: string[];
}

const NOTES = `# Release notes\n\nShip --json on Friday. ${"Every command prints one JSON document. ".repeat(40)}\n`;
const SUMMARY = "## Goal\nShip --json.\n\n## Progress\nThe notes were read: ship on Friday.\n\n## Next Steps\n1. Write the tests.";

/** The fake model: Keel's summary requests get a summary; a turn that asks for the notes reads them first, then each turn answers. */
function playModel(request: FakeProviderRequest): FakeReply {
  if (!request.hasTools && request.text.includes("<conversation>")) {
    // A summary of a turn cut in the middle starts from the turn's request (Keel's summary prompt asks for it).
    const text = request.text.includes("This is the PREFIX of a turn") ? "## Original Request\nWrite the tests." : SUMMARY;
    return { text, usage: { inputUncached: 600, output: 40 } };
  }
  // The turn's own prompt is the last user message; a tool message after it is a tool's result.
  const messages = (request.body as { messages?: { role: string; content: unknown }[] }).messages ?? [];
  const prompt = String(messages.findLast((message) => message.role === "user")?.content ?? "");
  if (prompt.includes("Read the notes") && messages.at(-1)?.role !== "tool") {
    return { toolCalls: [{ name: "read", arguments: { path: "NOTES.md" } }], usage: { inputUncached: 300, output: 10 } };
  }
  const step = ["Read the notes", "Plan the tests", "Write the tests", "Review the tests"].find((name) => prompt.includes(name)) ?? "?";
  // The plan is long: it is what pushes the thread towards the window.
  const detail = step === "Plan the tests" ? `\n${"- a test for one command's --json output\n".repeat(70)}` : "";
  return { text: `Done: ${step}.${detail}\nDecision: ${step.toLowerCase()} done\nInspected: NOTES.md`, usage: { inputUncached: 400, output: 20 } };
}

/** One "process": the store, the AI SDK backend over it, and Keel's runtime with the rolling policy. */
function openHost(dir: string, workspace: string, model: LanguageModel) {
  const store = createFsStore({ dir: join(dir, "store") });
  const read = tool({
    description: "Read a file of the project",
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => readFile(join(workspace, path), "utf8"),
  });
  const backend = createAiSdkBackend({
    model,
    tools: { read },
    toolFileAccess: { read: { op: "read", pathArgument: "path" } },
    store,
    maxRetries: 0,
    // A small window so that this short thread is compacted; use your model's real one.
    compaction: { contextWindow: 3_000, reserveTokens: 1_800, keepRecentTokens: 200 },
  });
  // Rotate the role's session to a new thread, seeded from its capsule, after three turns.
  const keel = createKeel({ store, cwd: workspace, backends: [backend], policy: "rolling", limits: { maxTurns: 3 }, instructions: false });
  const turn = async (prompt: string): Promise<RoleTurnResult> => {
    const result = await keel.runRoleTurn({ missionId: "release", role: "engineer", prompt, objective: "Ship --json" });
    if (result.isErr()) throw result.error; // a KeelError: backend_failed (retryable on 429/5xx), resume_failed, …
    return result.value;
  };
  const close = async () => {
    await keel.close();
    await store.close();
  };
  return { turn, close };
}

/** Runs the thread in `dir`: a turn, a restart, three more turns (the third compacted, the fourth rotated). */
export async function runAiSdkThread(options: { dir: string }): Promise<AiSdkThreadRun> {
  const workspace = join(options.dir, "workspace");
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, "NOTES.md"), NOTES);
  const provider: FakeProvider = (await startFakeProvider({ respond: playModel }))._unsafeUnwrap();
  try {
    // In your host: createOpenAI()("gpt-5"), createAnthropic()("claude-sonnet-4-5"), …
    const model = createOpenAICompatible({ name: "fake", baseURL: provider.openAiUrl, apiKey: "fake-key", includeUsage: true })("fake-model");
    const turns: RoleTurnResult[] = [];
    const requestsOf: FakeProviderRequest[][] = [];
    const turn = async (host: ReturnType<typeof openHost>, prompt: string) => {
      const before = provider.modelRequests().length;
      turns.push(await host.turn(prompt));
      requestsOf.push(provider.modelRequests().slice(before));
    };

    const first = openHost(options.dir, workspace, model);
    await turn(first, "Read the notes and say when --json ships.");
    await first.close();

    // A second process over the same store: the thread id in the role's session is all it needs.
    const second = openHost(options.dir, workspace, model);
    await turn(second, "Plan the tests.");
    await turn(second, "Write the tests."); // the thread is near the window now: compacted first
    await turn(second, "Review the tests."); // the fourth turn: rotated
    await second.close();

    const isSummary = (request: FakeProviderRequest) => !request.hasTools && request.text.includes("<conversation>");
    const [, resumed = [], compacted = [], rotated = []] = requestsOf;
    return {
      actions: turns.map((done) => done.plan.action),
      threadIds: turns.map((done) => done.threadId ?? ""),
      restartCarriedToolResult: resumed[0]?.text.includes(NOTES.trim()) ?? false,
      compaction: {
        summaryCalls: compacted.filter(isSummary).length,
        summaryReachedTurn: compacted.some((request) => request.hasTools && request.text.includes("## Next Steps") && !request.text.includes(NOTES.trim())),
      },
      rotatedFromCapsule: rotated.length > 0 && rotated[0]!.text.includes("write the tests done") && !rotated[0]!.text.includes("## Next Steps"),
      reads: turns.flatMap((done) => done.fileAccess.filter((access) => access.op === "read").map((access) => access.path)),
    };
  } finally {
    await provider.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { mkdtemp } = await import("node:fs/promises");
  console.log(await runAiSdkThread({ dir: await mkdtemp(join(tmpdir(), "keel-ai-sdk-thread-")) }));
}
