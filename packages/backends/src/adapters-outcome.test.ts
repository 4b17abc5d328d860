import { readFileSync } from "node:fs";
import { UsageSchema, emptyUsage } from "@keel/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createClaudeCodeParser } from "./claude-code/index.js";
import { createCodexParser } from "./codex/index.js";
import { createCopilotParser } from "./copilot/index.js";
import { createGeminiParser } from "./gemini/index.js";
import { createGrokParser } from "./grok/index.js";
import { createOpenCodeParser } from "./opencode/index.js";
import { createPiParser } from "./pi/index.js";
import { createClaudeStyleParser } from "./kit/index.js";
import { createJsonLineParser, decideTurnOutcome, emptyFindings, type StreamFindings, type StreamParser, type TurnExit } from "./kit/index.js";

const findingsArbitrary: fc.Arbitrary<StreamFindings> = fc.record({
  threadId: fc.option(fc.string({ minLength: 1 }), { nil: null }),
  text: fc.option(fc.string(), { nil: null }),
  usage: fc.constant(emptyUsage()),
  fileAccess: fc.constant([]),
  toolCalls: fc.nat(5),
  resumeState: fc.constant(null),
  terminal: fc.boolean(),
  inBandError: fc.option(fc.string(), { nil: null }),
  events: fc.nat(20),
  strayLines: fc.nat(3),
  strayText: fc.string(),
  corruptReason: fc.option(fc.string(), { nil: null }),
});
const exitArbitrary: fc.Arbitrary<TurnExit> = fc.record({
  exitCode: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }),
  signal: fc.option(fc.constantFrom("SIGTERM", "SIGKILL"), { nil: null }),
  stderr: fc.string(),
});
const rules = (resumeThreadId: string | null) => ({
  backend: "test",
  resumeThreadId,
  resumeFailure: /thread is gone/i,
  requireThreadId: true,
});

describe("decideTurnOutcome (pure classification)", () => {
  it("property: an in-band error is never a success, whatever the exit code", () => {
    fc.assert(
      fc.property(findingsArbitrary, exitArbitrary, fc.option(fc.string({ minLength: 1 }), { nil: null }), (findings, exit, resume) => {
        const outcome = decideTurnOutcome({ ...findings, inBandError: "model failed" }, exit, rules(resume));
        expect(outcome.isErr()).toBe(true);
      }),
    );
  });

  it("property: resume_failed only when resuming; success only on a clean, complete, exit-0 stream", () => {
    fc.assert(
      fc.property(findingsArbitrary, exitArbitrary, fc.option(fc.string({ minLength: 1 }), { nil: null }), (findings, exit, resume) => {
        const outcome = decideTurnOutcome(findings, exit, rules(resume));
        if (outcome.isErr()) {
          if (outcome.error.code === "resume_failed") expect(resume).not.toBeNull();
          expect(["resume_failed", "backend_failed", "corrupt"]).toContain(outcome.error.code);
          expect(outcome.error.details.backend).toBe("test");
          return;
        }
        expect(exit).toMatchObject({ exitCode: 0, signal: null });
        expect(findings).toMatchObject({ inBandError: null, strayLines: 0, corruptReason: null, terminal: true });
        expect(outcome.value.threadId).toBe(findings.threadId ?? resume);
      }),
    );
  });

  it("property: the CLI's thread-gone message on a resume is resume_failed, whatever else happened", () => {
    fc.assert(
      fc.property(findingsArbitrary, exitArbitrary, fc.constantFrom("inBandError", "stderr", "strayText"), (findings, exit, where) => {
        const said = "Error: the thread is gone";
        const input = where === "inBandError" ? { ...findings, inBandError: said } : where === "strayText" ? { ...findings, strayText: said } : findings;
        const outcome = decideTurnOutcome(input, where === "stderr" ? { ...exit, stderr: said } : exit, rules("t-1"));
        expect(outcome._unsafeUnwrapErr().code).toBe("resume_failed");
        expect(outcome._unsafeUnwrapErr().details).toMatchObject({ threadId: "t-1", resumeFailed: true });
      }),
    );
  });

  it("a silent resume is resume_failed only where that is how the CLI fails", () => {
    const silent = { ...emptyFindings() };
    const exit = { exitCode: 0, signal: null, stderr: "" };
    expect(decideTurnOutcome(silent, exit, { ...rules("t"), emptyResumeIsFailure: true })._unsafeUnwrapErr().code).toBe("resume_failed");
    expect(decideTurnOutcome(silent, exit, rules("t"))._unsafeUnwrapErr().code).toBe("corrupt");
    expect(decideTurnOutcome(silent, { ...exit, exitCode: 42 }, { ...rules("t"), resumeFailureExitCodes: [42] })._unsafeUnwrapErr().code).toBe(
      "resume_failed",
    );
  });
});

const claudeLines = readFileSync(new URL("./claude-code/__fixtures__/claude-code.success.jsonl", import.meta.url), "utf8").trim().split("\n");
const parsers: [string, () => StreamParser][] = [
  ["claude-code", createClaudeCodeParser],
  ["codex", createCodexParser],
  ["pi", createPiParser],
  ["opencode", createOpenCodeParser],
  ["copilot", () => createCopilotParser(null)],
  ["cursor", () => createClaudeStyleParser("cursor")],
  ["gemini", createGeminiParser],
  ["grok", () => createGrokParser(null)],
];

describe("stream parsers (properties)", () => {
  it.each(parsers)("%s: any input lines never throw and leave a well-formed usage", (_name, create) => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((value) => JSON.stringify({ type: "x", value })))), (lines) => {
        const parser = create();
        for (const line of lines) parser.push(line);
        const findings = parser.findings();
        expect(UsageSchema.safeParse(findings.usage).success).toBe(true);
        expect(findings.events + findings.strayLines).toBeLessThanOrEqual(lines.length);
      }),
    );
  });

  it("property: unknown event types interleaved anywhere change nothing but the event count", () => {
    const unknownEvent = fc
      .record({ type: fc.string().filter((type) => !["system", "assistant", "result", "user"].includes(type)), payload: fc.jsonValue() })
      .map((event) => JSON.stringify(event));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(claudeLines.length), unknownEvent), { maxLength: 10 }), (insertions) => {
        const lines = [...claudeLines];
        for (const [position, line] of insertions) lines.splice(Math.min(position, lines.length), 0, line);
        const plain = createClaudeCodeParser();
        for (const line of claudeLines) plain.push(line);
        const mixed = createClaudeCodeParser();
        for (const line of lines) mixed.push(line);
        expect({ ...mixed.findings(), events: 0 }).toEqual({ ...plain.findings(), events: 0 });
      }),
    );
  });

  it("a handler that throws marks the stream corrupt instead of escaping", () => {
    const parser = createJsonLineParser(() => {
      throw new Error("bug");
    });
    parser.push('{"type":"x"}');
    expect(parser.findings().corruptReason).toMatch(/bug/);
  });
});
