import { tmpdir } from "node:os";
import { createManualClock, estimateTokens, totalInputTokens, utf8Bytes } from "@keel/core";
import { describeBackendConformance, type BackendConformanceTarget } from "@keel/testkit/backend";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createScriptedBackend, type ScriptedReply, type ScriptedThread, type ScriptedTurn } from "./index.js";

const cwd = tmpdir();

/** The conformance script: the scenario is named by the model (so prompts, and thus usage, stay alike). */
function conformanceScript(turn: ScriptedTurn): string | ScriptedReply {
  const scenario = turn.model?.replace(/^scenario-/, "");
  if (scenario === "in_band_error") return { fail: "backend_failed", message: "model refused" };
  if (scenario === "garbage") return { fail: "garbage" };
  if (scenario === "hang") return { fail: "hang" };
  return "The README introduces a small fixture project.";
}

const target = (resumable: boolean): BackendConformanceTarget => ({
  name: `scripted (${resumable ? "resumable" : "fresh-only"})`,
  resumable,
  hangTimeoutMs: 200,
  setup: () => ({
    backend: createScriptedBackend({ resumable, script: conformanceScript }),
    cwd,
    scenario: (scenario) => ({ model: `scenario-${scenario}` }),
  }),
});
describeBackendConformance(target(true));
describeBackendConformance(target(false));

describe("scripted backend: a provider that remembers threads", () => {
  it("a resumed thread observes every earlier prompt and answer plus the new prompt", async () => {
    const backend = createScriptedBackend({ resumable: true, script: (turn) => `answer ${turn.threadTurn} to ${turn.prompt.length} chars`, baseInputTokens: 1000 });
    const first = (await backend.runTurn({ prompt: "Plan the feature in detail.", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
    const second = (await backend.runTurn({ prompt: "Now the tests.", cwd, timeoutMs: 1000, threadId: first.threadId! }))._unsafeUnwrap();
    const expectedFirst = 1000 + estimateTokens("Plan the feature in detail.");
    const expectedSecond =
      1000 + estimateTokens("Plan the feature in detail.") + estimateTokens(first.text) + estimateTokens("Now the tests.");
    expect(totalInputTokens(first.usage)).toBe(expectedFirst);
    expect(totalInputTokens(second.usage)).toBe(expectedSecond);
    expect(second.text).toBe("answer 2 to 14 chars");
    expect(second.threadId).toBe(first.threadId);
    // The host sent only the new part on resume.
    expect(backend.calls.map((call) => [call.action, call.promptBytes])).toEqual([
      ["fresh", utf8Bytes("Plan the feature in detail.")],
      ["resumed", utf8Bytes("Now the tests.")],
    ]);
    // A fresh thread starts empty again.
    const third = (await backend.runTurn({ prompt: "Now the tests.", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
    expect(totalInputTokens(third.usage)).toBe(1000 + estimateTokens("Now the tests."));
    expect(third.threadId).not.toBe(first.threadId);
  });

  it("reports tool calls as scripted: one per file access by default, null for a backend that cannot see them", async () => {
    const read = { op: "read" as const, path: "README.md", tool: "Read" };
    const replies: ScriptedReply[] = [{ text: "a", fileAccess: [read] }, { text: "b" }, { text: "c", toolCalls: null }];
    const backend = createScriptedBackend({ resumable: false, script: replies });
    const counts = [];
    for (const _reply of replies) counts.push((await backend.runTurn({ prompt: "Go.", cwd, timeoutMs: 1000 }))._unsafeUnwrap().toolCalls);
    expect(counts).toEqual([1, 0, null]);
  });

  it("property: input tokens of turn k = base + all earlier prompts and answers + prompt k", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.string({ minLength: 1 }), fc.string()), { minLength: 1, maxLength: 6 }), fc.nat(5000), async (turns, base) => {
        const answers = turns.map(([, text]) => text);
        const backend = createScriptedBackend({ resumable: true, script: answers, baseInputTokens: base });
        let threadId: string | undefined;
        let remembered = 0;
        let previous = -1;
        for (const [prompt, text] of turns) {
          const result = (await backend.runTurn({ prompt, cwd, timeoutMs: 1000, ...(threadId ? { threadId } : {}) }))._unsafeUnwrap();
          const observed = totalInputTokens(result.usage)!;
          expect(observed).toBe(base + remembered + estimateTokens(prompt));
          expect(observed).toBeGreaterThan(previous);
          expect(result.usage.output).toBe(estimateTokens(text));
          previous = observed;
          remembered += estimateTokens(prompt) + estimateTokens(text);
          threadId = result.threadId!;
        }
      }),
      { numRuns: 50 },
    );
  });

  it("reports the remembered part as cache reads with promptCache", async () => {
    const backend = createScriptedBackend({ resumable: true, script: "ok", promptCache: true, baseInputTokens: 30 });
    const first = (await backend.runTurn({ prompt: "abcdef", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
    const second = (await backend.runTurn({ prompt: "ghi", cwd, timeoutMs: 1000, threadId: first.threadId! }))._unsafeUnwrap();
    expect(first.usage).toMatchObject({ inputUncached: 32, cacheRead: 0 });
    expect(second.usage).toMatchObject({ inputUncached: 1, cacheRead: 30 + 2 + 1, cacheWrite: 0, output: 1, reasoning: 0, costUsd: null });
  });

  it("a fresh-only backend never remembers: input is always base + prompt, thread id null", async () => {
    const backend = createScriptedBackend({ resumable: false, script: "long answer ".repeat(20), baseInputTokens: 7 });
    for (let index = 0; index < 3; index++) {
      const result = (await backend.runTurn({ prompt: "same prompt", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
      expect(result.threadId).toBeNull();
      expect(totalInputTokens(result.usage)).toBe(7 + estimateTokens("same prompt"));
    }
  });

  it("answers can depend on the prompt: a reviewer verdict computed from the diff it is shown", async () => {
    const reviewer = createScriptedBackend({
      resumable: true,
      script: (turn) => {
        const diff = turn.prompt.split("```diff")[1] ?? "";
        const verdict = /^\+.*TODO/m.test(diff) ? "REQUEST_CHANGES: a TODO was added" : "APPROVE";
        return { text: verdict, outputTokens: 5, costUsd: 0.001 };
      },
    });
    const clean = (await reviewer.runTurn({ prompt: "Review:\n```diff\n+const a = 1;\n```", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
    const dirty = (await reviewer.runTurn({ prompt: "Review:\n```diff\n+// TODO fix\n```", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
    expect(clean.text).toBe("APPROVE");
    expect(dirty.text).toMatch(/^REQUEST_CHANGES/);
    expect(dirty.usage).toMatchObject({ output: 5, costUsd: 0.001 });
  });

  it("consumes a list script in order and fails past its end", async () => {
    const backend = createScriptedBackend({ resumable: true, script: ["one", { text: "two" }, (turn) => `three (${turn.call})`] });
    const texts: string[] = [];
    for (let index = 0; index < 3; index++) texts.push((await backend.runTurn({ prompt: "go", cwd, timeoutMs: 1000 }))._unsafeUnwrap().text);
    expect(texts).toEqual(["one", "two", "three (3)"]);
    const error = (await backend.runTurn({ prompt: "go", cwd, timeoutMs: 1000 }))._unsafeUnwrapErr();
    expect(error.code).toBe("backend_failed");
    expect(error.details.reason).toBe("script_exhausted");
  });

  it("fails as configured: timeout, resume_failed (the thread is forgotten), unavailable, garbage", async () => {
    const backend = createScriptedBackend({
      resumable: true,
      script: ["first", { fail: "timeout" }, { fail: "resume_failed" }, { fail: "unavailable" }, { fail: "garbage" }, { fail: "resume_failed" }],
    });
    const first = (await backend.runTurn({ prompt: "start", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
    const resume = { prompt: "more", cwd, timeoutMs: 1000, threadId: first.threadId! };
    const timeout = (await backend.runTurn(resume))._unsafeUnwrapErr();
    expect(timeout).toMatchObject({ code: "timeout", details: { threadId: first.threadId } });
    // The interrupted turn's prompt stays in the thread, as in a CLI transcript.
    expect(backend.thread(first.threadId!)!.exchanges.map((exchange) => exchange.prompt)).toEqual(["start", "more"]);
    expect((await backend.runTurn(resume))._unsafeUnwrapErr()).toMatchObject({ code: "resume_failed", details: { resumeFailed: true } });
    expect(backend.thread(first.threadId!)).toBeUndefined();
    const unavailable = (await backend.runTurn({ prompt: "x", cwd, timeoutMs: 1000 }))._unsafeUnwrapErr();
    expect(unavailable).toMatchObject({ code: "unavailable", retryable: true });
    expect((await backend.runTurn({ prompt: "x", cwd, timeoutMs: 1000 }))._unsafeUnwrapErr().code).toBe("corrupt");
    // resume_failed on a fresh turn is a script mistake.
    expect((await backend.runTurn({ prompt: "x", cwd, timeoutMs: 1000 }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(backend.calls.map((call) => call.outcome)).toEqual(["ok", "timeout", "resume_failed", "unavailable", "corrupt", "invalid_input"]);
  });

  it("an unknown or forgotten thread is resume_failed", async () => {
    const backend = createScriptedBackend({ resumable: true, script: "ok" });
    const first = (await backend.runTurn({ prompt: "a", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
    expect(backend.forgetThread(first.threadId!)).toBe(true);
    const error = (await backend.runTurn({ prompt: "b", cwd, timeoutMs: 1000, threadId: first.threadId! }))._unsafeUnwrapErr();
    expect(error).toMatchObject({ code: "resume_failed", details: { backend: "scripted", threadId: first.threadId } });
  });

  it("shares provider-side threads between instances through `threads`", async () => {
    const threads = new Map<string, ScriptedThread>();
    const one = createScriptedBackend({ resumable: true, script: "first answer", threads });
    const first = (await one.runTurn({ prompt: "start", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
    const two = createScriptedBackend({ resumable: true, script: (turn) => `seen ${turn.history.length}`, threads });
    const next = (await two.runTurn({ prompt: "go on", cwd, timeoutMs: 1000, threadId: first.threadId! }))._unsafeUnwrap();
    expect(next.text).toBe("seen 1");
    const fresh = (await two.runTurn({ prompt: "new", cwd, timeoutMs: 1000 }))._unsafeUnwrap();
    expect(fresh.threadId).not.toBe(first.threadId);
  });

  it("waits delayMs, reports the clock's duration, and is aborted during the wait", async () => {
    const clock = createManualClock();
    const backend = createScriptedBackend({ resumable: true, script: [{ text: "late", delayMs: 20 }, { text: "never", delayMs: 60_000 }, { text: "x", durationMs: 1234 }], clock });
    expect((await backend.runTurn({ prompt: "a", cwd, timeoutMs: 1000 }))._unsafeUnwrap()).toMatchObject({ text: "late", durationMs: 0 });
    const controller = new AbortController();
    const pending = backend.runTurn({ prompt: "b", cwd, timeoutMs: 120_000 }, controller.signal);
    setTimeout(() => controller.abort(), 20);
    expect((await pending)._unsafeUnwrapErr().code).toBe("aborted");
    expect((await backend.runTurn({ prompt: "c", cwd, timeoutMs: 1000 }))._unsafeUnwrap().durationMs).toBe(1234);
  });

  it("hands the turn's model, cwd and skill paths to the script", async () => {
    const seen: ScriptedTurn[] = [];
    const backend = createScriptedBackend({ resumable: true, skills: "native", script: (turn) => (seen.push(turn), "ok") });
    await backend.runTurn({ prompt: "a", cwd, timeoutMs: 1000, model: "m1", skillPaths: ["/skills/x"] });
    expect(seen[0]).toMatchObject({ call: 1, action: "fresh", threadTurn: 1, model: "m1", cwd, skillPaths: ["/skills/x"], history: [] });
    expect(backend.capabilities).toEqual({ resume: true, skills: "native", usage: "full" });
  });

  it("refuses bad options at once and bad replies per turn with invalid_input", async () => {
    expect(() => createScriptedBackend({ resumable: true, script: [] })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(() => createScriptedBackend({ script: "x" } as never)).toThrow(expect.objectContaining({ code: "invalid_input" }));
    const backend = createScriptedBackend({ resumable: true, script: () => ({ text: "x", outputTokens: -1 }) });
    expect((await backend.runTurn({ prompt: "a", cwd, timeoutMs: 1000 }))._unsafeUnwrapErr().code).toBe("invalid_input");
    const throwing = createScriptedBackend({
      resumable: true,
      script: () => {
        throw new Error("bug in script");
      },
    });
    expect((await throwing.runTurn({ prompt: "a", cwd, timeoutMs: 1000 }))._unsafeUnwrapErr().code).toBe("backend_failed");
  });
});
