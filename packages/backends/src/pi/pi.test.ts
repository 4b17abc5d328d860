import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { decideTurnOutcome } from "../kit/index.js";
import { PI_RESUME_FAILURE, createPiBackend, createPiParser, type PiBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-pi.mjs", import.meta.url);

describeBackendConformance(fakeCliTarget("pi", true, createPiBackend, fake));

describe("pi adapter (fake CLI)", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<PiBackendOptions> = {}) => {
    harness = await createFakeCliHarness("pi", createPiBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("sums the usage of every assistant step and answers with the last text", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("The README introduces a small fixture project.");
    expect(result.usage).toEqual({ inputUncached: 508, cacheRead: 4012, cacheWrite: 0, output: 33, reasoning: null, costUsd: 0.003 });
  });

  it("loads exactly the request's skills natively (--no-skills, --skill) and resumes with --session", async () => {
    const { backend, cwd } = await open({ provider: "anthropic", thinking: "low", sessionDir: "/tmp/pi-sessions", tools: ["read", "bash"] });
    const first = (await backend.runTurn({ prompt: "@notes.md is not a file", cwd, timeoutMs: 30_000, skillPaths: ["/skills/a", "/skills/b"] }))._unsafeUnwrap();
    (await backend.runTurn({ prompt: "again", cwd, timeoutMs: 30_000, threadId: first.threadId!, model: "claude-sonnet-4-6" }))._unsafeUnwrap();
    const [fresh, resumed] = await harness.invocations();
    expect(fresh!.argv).toEqual([
      "--mode",
      "json",
      "--provider",
      "anthropic",
      "--thinking",
      "low",
      "--session-dir",
      "/tmp/pi-sessions",
      "--tools",
      "read,bash",
      "--no-skills",
      "--skill",
      "/skills/a",
      "--skill",
      "/skills/b",
      " @notes.md is not a file",
    ]);
    expect(resumed!.argv).toEqual([
      "--mode",
      "json",
      "--provider",
      "anthropic",
      "--model",
      "claude-sonnet-4-6",
      "--thinking",
      "low",
      "--session-dir",
      "/tmp/pi-sessions",
      "--tools",
      "read,bash",
      "--session",
      first.threadId,
      "again",
    ]);
  });

  it("classifies the cross-project fork prompt answered by a closed stdin as resume_failed", () => {
    const parser = createPiParser();
    parser.push("Session found in different project: /elsewhere");
    parser.push("Aborted.");
    const outcome = decideTurnOutcome(parser.findings(), { exitCode: 0, signal: null, stderr: "" }, {
      backend: "pi",
      resumeThreadId: "9ee9956f",
      resumeFailure: PI_RESUME_FAILURE,
      emptyResumeIsFailure: true,
    });
    expect(outcome._unsafeUnwrapErr().code).toBe("resume_failed");
  });
});
