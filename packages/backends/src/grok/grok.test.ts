import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { createGrokBackend, type GrokBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-grok.mjs", import.meta.url);

// No tool event of Grok Build was ever recorded: a turn showing none reports toolCalls null.
describeBackendConformance({ ...fakeCliTarget("grok", true, createGrokBackend, fake), toolCalls: "unknown" });

describe("grok adapter", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<GrokBackendOptions> = {}) => {
    harness = await createFakeCliHarness("grok", createGrokBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("joins text deltas and splits reasoning out of output tokens", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("The README introduces a small fixture project.");
    expect(result.usage).toEqual({ inputUncached: 18210, cacheRead: 5120, cacheWrite: null, output: 23, reasoning: 41, costUsd: null });
  });

  it("assigns fresh threads with -s, resumes with -r and pins --cwd", async () => {
    const { backend, cwd } = await open();
    const first = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000, model: "grok-4.5" }))._unsafeUnwrap();
    (await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrap();
    const [fresh, resumed] = await harness.invocations();
    expect(fresh!.argv).toEqual(["-p", "one", "--output-format", "streaming-json", "-m", "grok-4.5", "--always-approve", "--cwd", cwd, "-s", first.threadId]);
    expect(resumed!.argv).toEqual(["-p", "two", "--output-format", "streaming-json", "--always-approve", "--cwd", cwd, "-r", first.threadId]);
  });
});
