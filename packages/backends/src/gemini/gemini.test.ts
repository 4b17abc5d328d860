import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { createGeminiBackend, type GeminiBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-gemini.mjs", import.meta.url);

describeBackendConformance(fakeCliTarget("gemini", true, createGeminiBackend, fake));

describe("gemini adapter", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<GeminiBackendOptions> = {}) => {
    harness = await createFakeCliHarness("gemini", createGeminiBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("answers with all the assistant's text (before and after its tool call), reports the read, and splits cached input", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("Let me read it.\n\nThe README introduces a small fixture project.");
    expect(result.fileAccess).toEqual([
      { op: "read", path: "/home/keel/project/README.md", tool: "read_file", bytes: Buffer.byteLength("# Project\nA small fixture project.\n") },
    ]);
    expect(result.toolCalls).toBe(1);
    expect(result.usage).toEqual({ inputUncached: 1608, cacheRead: 8192, cacheWrite: null, output: 140, reasoning: null, costUsd: null });
  });

  it("passes the prompt with -p, the approval mode and --resume, and trusts the workspace", async () => {
    const { backend, cwd } = await open({ approvalMode: "auto_edit" });
    const first = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000, model: "gemini-2.5-flash" }))._unsafeUnwrap();
    (await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrap();
    const [fresh, resumed] = await harness.invocations();
    expect(fresh!.argv).toEqual(["-p", "one", "--output-format", "stream-json", "-m", "gemini-2.5-flash", "--approval-mode", "auto_edit"]);
    expect(resumed!.argv).toEqual(["-p", "two", "--output-format", "stream-json", "--approval-mode", "auto_edit", "--resume", first.threadId]);
    expect(fresh!.env.GEMINI_CLI_TRUST_WORKSPACE).toBe("true");
  });

  it("classifies exit code 42 on resume as resume_failed with the CLI's message", async () => {
    const { backend, cwd } = await open();
    const error = (await backend.runTurn({ prompt: "x", cwd, timeoutMs: 30_000, threadId: "5" }))._unsafeUnwrapErr();
    expect(error.code).toBe("resume_failed");
    expect(error.details.exitCode).toBe(42);
  });
});
