import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { createCodexBackend, createCodexParser, type CodexBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-codex.mjs", import.meta.url);

describeBackendConformance(fakeCliTarget("codex", true, createCodexBackend, fake));

describe("codex adapter", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<CodexBackendOptions> = {}) => {
    harness = await createFakeCliHarness("codex", createCodexBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("reads the last agent message and maps cached input out of input_tokens", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("The README introduces a small fixture project.");
    expect(result.usage).toEqual({ inputUncached: 520, cacheRead: 11520, cacheWrite: null, output: 56, reasoning: 40, costUsd: null });
  });

  it("puts every flag before `resume <id>` and pins cwd with --cd", async () => {
    const { backend, cwd } = await open({ sandbox: "read-only", extraArgs: ["-c", "model_reasoning_effort=high"], skipGitRepoCheck: false });
    const first = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000, model: "gpt-5.4" }))._unsafeUnwrap();
    (await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, model: "gpt-5.4", threadId: first.threadId! }))._unsafeUnwrap();
    const [, resumed] = await harness.invocations();
    expect(resumed!.argv).toEqual([
      "exec",
      "--json",
      "--cd",
      cwd,
      "--sandbox",
      "read-only",
      "-m",
      "gpt-5.4",
      "-c",
      "model_reasoning_effort=high",
      "resume",
      first.threadId,
      "two",
    ]);
  });

  it("treats a top-level error followed by a completed turn as recovered", () => {
    const parser = createCodexParser();
    for (const event of [
      { type: "thread.started", thread_id: "t1" },
      { type: "error", message: "Reconnecting... 1/5" },
      { type: "item.completed", item: { type: "agent_message", text: "done" } },
      { type: "turn.completed", usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 2 } },
    ]) {
      parser.push(JSON.stringify(event));
    }
    expect(parser.findings()).toMatchObject({ threadId: "t1", text: "done", inBandError: null, terminal: true });
  });
});
