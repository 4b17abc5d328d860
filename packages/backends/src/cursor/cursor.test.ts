import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { createCursorBackend, type CursorBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-cursor.mjs", import.meta.url);

describeBackendConformance(fakeCliTarget("cursor", true, createCursorBackend, fake));

describe("cursor adapter", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<CursorBackendOptions> = {}) => {
    harness = await createFakeCliHarness("cursor", createCursorBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("answers with the result text and reports no usage", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("Reading the README. The README introduces a small fixture project.");
    expect(Object.values(result.usage).every((value) => value === null)).toBe(true);
  });

  it("pins the workspace, trusts it, forces tools and resumes with --resume", async () => {
    const { backend, cwd } = await open();
    const first = (await backend.runTurn({ prompt: "one", cwd, timeoutMs: 30_000, model: "gpt-5" }))._unsafeUnwrap();
    (await backend.runTurn({ prompt: "two", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrap();
    const [fresh, resumed] = await harness.invocations();
    expect(fresh!.argv).toEqual(["-p", "--output-format", "stream-json", "--model", "gpt-5", "--force", "--trust", "--workspace", cwd, "one"]);
    expect(resumed!.argv).toEqual(["-p", "--output-format", "stream-json", "--force", "--trust", "--workspace", cwd, "--resume", first.threadId, "two"]);
  });
});
