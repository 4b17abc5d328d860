import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { createQoderBackend, type QoderBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-qoder.mjs", import.meta.url);

describeBackendConformance(fakeCliTarget("qoder", true, createQoderBackend, fake));

describe("qoder adapter", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<QoderBackendOptions> = {}) => {
    harness = await createFakeCliHarness("qoder", createQoderBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("falls back to the last assistant text when the result has none", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("The README introduces a small fixture project.");
    expect(result.usage).toEqual({ inputUncached: 5210, cacheRead: null, cacheWrite: null, output: 38, reasoning: null, costUsd: 0 });
  });

  it("uses Claude-style flags with -w for the cwd and -r to resume", async () => {
    const { backend, cwd } = await open({ yolo: false });
    const first = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000, model: "performance" }))._unsafeUnwrap();
    (await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrap();
    const [fresh, resumed] = await harness.invocations();
    expect(fresh!.argv).toEqual(["-p", "--output-format", "stream-json", "-m", "performance", "-w", cwd, "one"]);
    expect(resumed!.argv).toEqual(["-p", "--output-format", "stream-json", "-w", cwd, "-r", first.threadId, "two"]);
  });
});
