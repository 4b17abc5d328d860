import { writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { createMemoryStore } from "@keel/store";
import { useTempDirs } from "@keel/testkit";
import { describeBackendConformance } from "@keel/testkit/backend";
import { reportedUsage, startFakeProvider, type FakeReply } from "@keel/testkit/provider";
import { tool } from "ai";
import { z } from "zod";
import { createAiSdkBackend } from "./ai-sdk-backend.js";

const dirs = useTempDirs("keel-ai-sdk-conformance-");
const README = "Keel keeps agent threads durable.";

/** What the fake model answers, by the marker the scenario put in the prompt. */
function respond(text: string): FakeReply {
  if (text.includes("[hang]")) return { hang: true };
  if (text.includes("[transient]")) return { error: { status: 529 } };
  if (text.includes("[tool_read]")) return text.includes(README) ? { text: "It is about threads." } : { toolCalls: [{ name: "read", arguments: { path: "README.md" } }] };
  return { text: "Keel is a library." };
}

// The AI SDK loop runs in-process: no process to probe (the suite's process checks do not apply),
// and the fake provider cannot print garbage or unknown events into the SDK's parser.
describeBackendConformance({
  name: "ai-sdk (OpenAI Chat Completions, fake provider)",
  resumable: true,
  scenarios: ["success", "transient_error", "hang", "tool_read"],
  toolReadPath: "README.md",
  expectedUsage: { fresh: reportedUsage("openai-chat", undefined), resumed: reportedUsage("openai-chat", undefined) },
  async setup() {
    const cwd = dirs.dir();
    writeFileSync(join(cwd, "README.md"), README);
    const provider = (await startFakeProvider({ respond: (request) => respond(request.text.split("\n").slice(-3).join("\n")) }))._unsafeUnwrap();
    const read = tool({
      description: "Read a file",
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => readFile(join(cwd, path), "utf8"),
    });
    const backend = createAiSdkBackend({
      model: createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).chat("fake-model"),
      tools: { read },
      store: createMemoryStore(),
      maxRetries: 0,
      toolFileAccess: { read: { op: "read", pathArgument: "path" } },
    });
    const markers = { success: "", transient_error: " [transient]", hang: " [hang]", tool_read: " [tool_read]" } as Record<string, string>;
    return {
      backend,
      cwd,
      scenario: (scenario) => (markers[scenario] ? { prompt: `Summarize the README.${markers[scenario]}` } : {}),
      async cleanup() {
        if (provider.failures.length > 0) throw new Error(`fake provider failures: ${JSON.stringify(provider.failures)}`);
        await provider.close();
      },
    };
  },
});
