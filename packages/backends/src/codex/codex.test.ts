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
      "--disable",
      "plugins",
      "--disable",
      "apps",
      "-m",
      "gpt-5.4",
      "-c",
      "model_reasoning_effort=high",
      "resume",
      first.threadId,
      "two",
    ]);
  });

  it("reports a resumed turn's own usage: the running total minus the previous turn's, carried in resumeState", async () => {
    const { backend, cwd } = await open();
    const first = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(first.resumeState).toEqual({ codexRunningTotal: first.usage });
    const second = (
      await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, threadId: first.threadId!, resumeState: first.resumeState! })
    )._unsafeUnwrap();
    // Running total 36200 in (34560 cached) / 230 out (90 reasoning), minus turn 1's 12040 (11520) / 96 (40).
    expect(second.usage).toEqual({ inputUncached: 1120, cacheRead: 23040, cacheWrite: null, output: 84, reasoning: 50, costUsd: null });
    expect(second.resumeState).toEqual({ codexRunningTotal: { inputUncached: 1640, cacheRead: 34560, cacheWrite: null, output: 140, reasoning: 90, costUsd: null } });
    // Without the previous total the turn's own figure is unknown: null, never the running total.
    const blind = (await backend.runTurn({ prompt: "three", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrap();
    expect(Object.values(blind.usage).every((bucket) => bucket === null)).toBe(true);
  });

  it("turns the running totals seen from the real Codex 0.171 into per-turn figures (100/5, then 300/15)", () => {
    const turn = (usage: Record<string, number>, options: Parameters<typeof createCodexParser>[0]) => {
      const parser = createCodexParser(options);
      parser.push(JSON.stringify({ type: "thread.started", thread_id: "t1" }));
      parser.push(JSON.stringify({ type: "turn.completed", usage }));
      return parser.findings();
    };
    const first = turn({ input_tokens: 100, cached_input_tokens: 0, output_tokens: 5 }, {});
    expect(first.usage).toMatchObject({ inputUncached: 100, cacheRead: 0, output: 5 });
    const second = turn({ input_tokens: 300, cached_input_tokens: 0, output_tokens: 15 }, { resumeThreadId: "t1", resumeState: first.resumeState });
    expect(second.usage).toMatchObject({ inputUncached: 200, cacheRead: 0, output: 10 });
    // A total that shrank is not the thread the state came from: unknown, not negative.
    const other = turn({ input_tokens: 50, cached_input_tokens: 0, output_tokens: 1 }, { resumeThreadId: "t1", resumeState: second.resumeState });
    expect(other.usage).toMatchObject({ inputUncached: null, output: null });
  });

  it("reports the commands' reads and searches and the file changes as file accesses", async () => {
    const { backend, cwd } = await open();
    const first = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(first.fileAccess).toEqual([{ op: "read", path: "README.md", tool: "exec_command" }]);
    expect(first.toolCalls).toBe(1);
    const second = (await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrap();
    expect(second.fileAccess).toEqual([
      { op: "search", path: "src", tool: "exec_command" },
      { op: "read", path: "src/app.ts", tool: "exec_command" },
      { op: "write", path: "src/app.ts", tool: "apply_patch" },
    ]);
    expect(second.toolCalls).toBe(3);
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
