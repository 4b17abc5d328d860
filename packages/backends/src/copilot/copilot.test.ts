import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { createCopilotBackend, type CopilotBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-copilot.mjs", import.meta.url);

describeBackendConformance(fakeCliTarget("copilot", true, createCopilotBackend, fake));

describe("copilot adapter", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<CopilotBackendOptions> = {}) => {
    harness = await createFakeCliHarness("copilot", createCopilotBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("answers with the last assistant message and reports output tokens only", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("The README introduces a small fixture project.");
    expect(result.usage).toEqual({ inputUncached: null, cacheRead: null, cacheWrite: null, output: 29, reasoning: null, costUsd: null });
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
