import { join } from "node:path";
import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { copilotTurnUsage, createCopilotBackend, type CopilotBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-copilot.mjs", import.meta.url);

describeBackendConformance(fakeCliTarget("copilot", true, createCopilotBackend, fake));

describe("copilot adapter", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<CopilotBackendOptions> = {}) => {
    harness = await createFakeCliHarness("copilot", createCopilotBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("answers with the last assistant message; without a session log, only the output tokens stdout showed", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("The README introduces a small fixture project.");
    expect(result.usage).toEqual({ inputUncached: null, cacheRead: null, cacheWrite: null, output: 29, reasoning: null, costUsd: null });
  });

  it("reads each turn's own usage from the session-state events.jsonl (1.0.102 prints none on stdout)", async () => {
    const { backend, cwd, root } = await open();
    const env = { COPILOT_HOME: join(root, "copilot-home") };
    const first = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000, env }))._unsafeUnwrap();
    expect(first.usage).toEqual({ inputUncached: 900, cacheRead: 100, cacheWrite: null, output: 10, reasoning: null, costUsd: null });
    const second = (await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, env, threadId: first.threadId! }))._unsafeUnwrap();
    expect(second.usage).toEqual({ inputUncached: 1800, cacheRead: 200, cacheWrite: null, output: 20, reasoning: null, costUsd: null });
  });

  it("sums a turn's usage records after its prompt, skips a torn last line, and knows nothing without records", () => {
    const log = [
      { type: "user.message", data: { content: "one" } },
      { type: "session.usage_record", data: { inputTokens: 50, outputTokens: 5 } },
      { type: "user.message", data: { content: "two" } },
      { type: "session.usage_record", data: { inputTokens: 70, cacheReadTokens: 20, outputTokens: 7, reasoningTokens: 2 } },
      { type: "session.usage_record", data: { inputTokens: 30, outputTokens: 3 } },
    ].map((event) => JSON.stringify(event));
    expect(copilotTurnUsage(`${log.join("\n")}\n{"type":"session.us`)).toEqual({
      inputUncached: 80,
      cacheRead: 20,
      cacheWrite: null,
      output: 8,
      reasoning: 2,
      costUsd: null,
    });
    expect(copilotTurnUsage(JSON.stringify({ type: "user.message", data: {} }))).toBeNull();
  });

  it("keeps Copilot's own error message", async () => {
    const { backend, cwd } = await open();
    const error = (await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000, env: { KEEL_FAKE_SCENARIO: "in_band_error" } }))._unsafeUnwrapErr();
    expect(error.code).toBe("backend_failed");
    expect(error.message).toContain("Quota exhausted for this month");
    expect(error.retryable).toBe(false);
    const transient = (await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000, env: { KEEL_FAKE_SCENARIO: "transient_error" } }))._unsafeUnwrapErr();
    expect(transient.message).toContain("500 Internal Server Error");
    expect(transient.retryable).toBe(true);
  });

  it("reports the tool requests as tool calls and file reads", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.fileAccess).toEqual([{ op: "read", path: "README.md", tool: "view" }]);
    expect(result.toolCalls).toBe(1);
  });

  it("assigns a fresh thread its id up front and resumes with --resume=<id>", async () => {
    const { backend, cwd } = await open({ autopilot: true });
    const first = (await backend.runTurn({ prompt: "-one", cwd, timeoutMs: 30_000, model: "gpt-5.4" }))._unsafeUnwrap();
    (await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrap();
    const [fresh, resumed] = await harness.invocations();
    expect(fresh!.argv).toEqual([
      "-p",
      " -one",
      "--output-format",
      "json",
      "--model",
      "gpt-5.4",
      "--allow-all",
      "--no-ask-user",
      "--autopilot",
      `--session-id=${first.threadId}`,
    ]);
    expect(resumed!.argv).toEqual(["-p", "two", "--output-format", "json", "--allow-all", "--no-ask-user", "--autopilot", `--resume=${first.threadId}`]);
  });

  it("without assigned ids, takes the thread id from the result event", async () => {
    const { backend, cwd } = await open({ assignSessionId: false, allowAll: false });
    const result = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.threadId).toMatch(/^[0-9a-f-]{36}$/);
    const [call] = await harness.invocations();
    expect(call!.argv).toEqual(["-p", "one", "--output-format", "json"]);
  });
});
