import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { startFakeProvider, type FakeProvider } from "@keel/testkit/provider";
import { generateText, stepCountIs, tool } from "ai";
import { afterEach, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { repoRoot, runTs } from "../../../test/support/run-ts.js";
import { responseMessagesOf } from "./model-messages.js";
import { turnUsage } from "./internal/ai-sdk-usage.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The `ai` major a project runs @keel/ai-sdk's tests on: 7 in `ai-sdk-ai7`, unset (6, the installed `ai`) in `ai-sdk`. */
    aiMajor?: 6 | 7;
  }
}

const major = inject("aiMajor") ?? 6;
const devDependencies = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { devDependencies: Record<string, string> }).devDependencies;
/** The exact version pinned for a package (`6.0.333`, or `7.0.185` from `npm:ai@7.0.185`). */
const pinned = (name: string): string => devDependencies[name]!.replace(/^npm:.+@/, "");
/** What this project must have loaded: the exact `ai`, and providers of the model specification of its major. */
const expected = major === 7 ? { ai: pinned("ai-v7"), specification: "v4" } : { ai: pinned("ai"), specification: "v3" };

const providers: FakeProvider[] = [];
afterEach(async () => {
  for (const provider of providers.splice(0)) await provider.close();
});

describe(`the ai ${major} run`, () => {
  it("loads the ai version its project names (the SDK's own user agent on the wire) and providers of that major", async () => {
    const provider = (await startFakeProvider({ replies: [{ text: "hi" }] }))._unsafeUnwrap();
    providers.push(provider);
    await generateText({ model: createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).chat("fake-model"), prompt: "hi", maxRetries: 0 });
    const userAgent = String(provider.modelRequests()[0]!.headers["user-agent"]);
    expect(userAgent).toContain(`ai/${expected.ai}`);
    expect(expected.ai.split(".")[0]).toBe(String(major));
    // ai 7's providers (@ai-sdk/openai 4, anthropic 4, openai-compatible 3) implement the v4 model specification, ai 6's the v3.
    const models = [
      createOpenAI({ apiKey: "test" }).chat("m"),
      createOpenAI({ apiKey: "test" }).responses("m"),
      createAnthropic({ apiKey: "test" })("m"),
      createOpenAICompatible({ name: "fake", baseURL: provider.openAiUrl }).chatModel("m"),
    ];
    expect(models.map((model) => model.specificationVersion)).toEqual(models.map(() => expected.specification));
  });

  it("runs the README's child processes on the same ai version", async () => {
    const printed = await runTs("packages/ai-sdk/test-support/print-ai-version.mjs", []);
    expect(printed.stderr).toBe("");
    expect(printed.stdout.trim()).toBe(expected.ai);
  });

  it("has the step messages and usage of its major, which Keel reads the same way on both", async () => {
    const provider = (await startFakeProvider({
      replies: [
        { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }], usage: { inputUncached: 600, output: 20 } },
        { text: "It says a.", usage: { inputUncached: 830, output: 9 } },
      ],
    }))._unsafeUnwrap();
    providers.push(provider);
    const read = tool({ description: "Read a file", inputSchema: z.object({ path: z.string() }), execute: async () => "a" });
    const result = await generateText({ model: createOpenAI({ baseURL: provider.openAiUrl, apiKey: "test" }).chat("fake-model"), tools: { read }, stopWhen: stepCountIs(5), prompt: "Read a.txt", maxRetries: 0 });
    expect(result.steps).toHaveLength(2);
    const all = responseMessagesOf(result)._unsafeUnwrap();
    expect(all.map((message) => message.role)).toEqual(["assistant", "tool", "assistant"]);
    const sum = turnUsage(result.steps);
    expect(sum).toMatchObject({ inputUncached: 1430, output: 29 });
    const loose = result as unknown as { responseMessages?: unknown; response: { messages: unknown[] }; usage: { inputTokens?: number; outputTokens?: number } };
    if (major === 7) {
      // ai 7: every step's messages in responseMessages, the last step's only in response.messages; usage is the sum.
      expect(loose.responseMessages).toEqual(all);
      expect(loose.response.messages).toHaveLength(1);
      expect([loose.usage.inputTokens, loose.usage.outputTokens]).toEqual([1430, 29]);
    } else {
      // ai 6: no responseMessages, every step's messages in response.messages; usage is the last step's.
      expect(loose.responseMessages).toBeUndefined();
      expect(loose.response.messages).toEqual(all);
      expect([loose.usage.inputTokens, loose.usage.outputTokens]).toEqual([830, 9]);
    }
    expect(provider.failures).toEqual([]);
  });

  it("type-checks the package's source against the types of its major", async () => {
    // ai 7's types through tsconfig.ai7.json's paths (what a host on ai 7 compiles against); ai 6's are the installed `ai`.
    const project = major === 7 ? "packages/ai-sdk/tsconfig.ai7.json" : "packages/ai-sdk/tsconfig.json";
    const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
    const { stdout } = await promisify(execFile)(process.execPath, [tsc, "-p", project, "--noEmit", "--listFiles"], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
    const aiTypes = stdout.split("\n").filter((file) => /\/node_modules\/ai\/dist\/index\.d\.ts$/.test(file));
    expect(aiTypes).toHaveLength(1);
    expect(aiTypes[0]).toContain(`/ai@${expected.ai}_`);
  }, 120_000);
});
