// Each adapter's parser against the real CLI output samples in ../shared/fixtures/cli (published
// captures, read in place, never copied), both directly and through the adapter, replayed by its
// fake executable as a real process.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Usage } from "@keel/core";
import { afterEach, describe, expect, it } from "vitest";
import { sharedFixtures } from "../../../test/support/shared-fixtures.js";
import { createFakeCliHarness, type FakeCliHarness } from "./__fixtures__/fake-cli-target.js";
import type { Backend } from "@keel/backend";
import type { CliBackendOptions } from "./kit/index.js";
import { createClaudeCodeBackend, createClaudeCodeParser, normalizeClaudeCodeUsage } from "./claude-code/index.js";
import { normalizeGeminiUsage } from "./gemini/index.js";
import { createCodexBackend, createCodexParser } from "./codex/index.js";
import { createCopilotBackend, createCopilotParser } from "./copilot/index.js";
import { createCursorBackend } from "./cursor/index.js";
import { createGeminiBackend, createGeminiParser } from "./gemini/index.js";
import { OPENCODE_RESUME_FAILURE, createOpenCodeBackend, createOpenCodeParser } from "./opencode/index.js";
import { createPiBackend, createPiParser } from "./pi/index.js";
import { createClaudeStyleParser } from "./kit/index.js";
import { decideTurnOutcome, type ParsedTurn, type StreamParser, type TurnOutcomeRules } from "./kit/index.js";

const { dir: samples, available: present } = sharedFixtures("cli");

const sample = (name: string) => resolve(samples, name);

function parse(create: () => StreamParser, file: string, rules: Omit<TurnOutcomeRules, "backend"> = { resumeThreadId: null, resumeFailure: /$^/ }): Pick<ParsedTurn, "text" | "threadId" | "usage"> {
  const parser = create();
  for (const line of readFileSync(sample(file), "utf8").split("\n")) parser.push(line);
  const { text, threadId, usage } = decideTurnOutcome(parser.findings(), { exitCode: 0, signal: null, stderr: "" }, { backend: "sample", ...rules })._unsafeUnwrap();
  return { text, threadId, usage };
}

const usage = (fields: Partial<Usage>): Usage => ({ inputUncached: null, cacheRead: null, cacheWrite: null, output: null, reasoning: null, costUsd: null, ...fields });

describe.runIf(present)("parsers read the real CLI samples", () => {
  it("Claude Code stream-json (v2.1.59)", () => {
    expect(parse(createClaudeCodeParser, "claude-code.stream-json.jsonl")).toEqual({
      text: 'Created `stream-test.txt` with the content "stream works".',
      threadId: "8fc99cf0-8cae-4821-aa70-c0e9a24667c3",
      usage: usage({ inputUncached: 4, cacheRead: 38897, cacheWrite: 1774, output: 107, costUsd: 0.033231000000000004 }),
    });
  });

  it("Claude Code json (the single result object)", () => {
    expect(parse(createClaudeCodeParser, "claude-code.output-format-json.json")).toEqual({
      text: 'Created `hello.txt` with "hello world".',
      threadId: "f9356e8d-87ad-4a05-9d46-80c1f1591878",
      usage: usage({ inputUncached: 4, cacheRead: 38821, cacheWrite: 1694, output: 101, costUsd: 0.032542999999999996 }),
    });
  });

  it("Codex exec --json", () => {
    expect(parse(createCodexParser, "codex-exec.json.jsonl")).toEqual({
      text: "Yep — there’s a `README.md` in the repository root.",
      threadId: "0199a213-81c0-7800-8aa1-bbab2a035a53",
      usage: usage({ inputUncached: 315, cacheRead: 24448, output: 122 }),
    });
  });

  it("pi --mode json: a first run with a tool call (steps summed) and a --continue run", () => {
    const first = parse(createPiParser, "pi.mode-json.first-run.jsonl");
    expect(first).toMatchObject({ text: "The file says: hello from the fixture file.", threadId: "9ee9956f-68f9-4411-9378-579fdb646943" });
    expect(first.usage).toMatchObject({ inputUncached: 1437, cacheRead: 0, cacheWrite: 0, output: 29, reasoning: null });
    expect(first.usage.costUsd).toBeCloseTo(0.002337 + 0.002409, 12);
    expect(parse(createPiParser, "pi.mode-json.continue.jsonl")).toEqual({
      text: "You're welcome.",
      threadId: "9ee9956f-68f9-4411-9378-579fdb646943",
      usage: usage({ inputUncached: 782, cacheRead: 0, cacheWrite: 0, output: 11, costUsd: 0.002511 }),
    });
  });

  it("OpenCode run --format json, and its error run that exited 0", () => {
    expect(parse(createOpenCodeParser, "opencode-run.format-json.jsonl")).toEqual({
      text: "\n\nHello",
      threadId: "ses_236c713fcffel8QozOz4ca0AYK",
      usage: usage({ inputUncached: 14406, cacheRead: 1840, cacheWrite: 0, output: 21, reasoning: 0, costUsd: 0 }),
    });
    const parser = createOpenCodeParser();
    for (const line of readFileSync(sample("opencode-run.format-json.error.jsonl"), "utf8").split("\n")) parser.push(line);
    const outcome = decideTurnOutcome(parser.findings(), { exitCode: 0, signal: null, stderr: "" }, {
      backend: "opencode",
      resumeThreadId: null,
      resumeFailure: OPENCODE_RESUME_FAILURE,
    });
    expect(outcome._unsafeUnwrapErr()).toMatchObject({ code: "backend_failed", details: { threadId: "ses_236c4ba84ffeKJLGiwxfHIx8Au" } });
    expect(outcome._unsafeUnwrapErr().message).toContain("Model not found: nonexistent/nonexistent.");
  });

  it("Copilot --output-format json (v1.0.13): output tokens only", () => {
    expect(parse(() => createCopilotParser(null), "copilot-cli.output-format-json.jsonl")).toEqual({
      text: "\n\nhello world",
      threadId: "aa778ea0-6eab-4ce9-b87e-11d6d33dab4f",
      usage: usage({ output: 6 }),
    });
  });

  it("Cursor stream-json: no usage documented", () => {
    expect(parse(() => createClaudeStyleParser("cursor"), "cursor-agent.stream-json.jsonl")).toEqual({
      text: "I'll read the README.md fileBased on the README, I'll create a summaryDone! I've created the summary in summary.txt",
      threadId: "c6b62c6f-7ead-4fd6-9922-e952131177ff",
      usage: usage({}),
    });
  });

  it("Gemini stream-json (docs sample, stats without a cache split)", () => {
    expect(parse(createGeminiParser, "gemini-cli.stream-json.jsonl")).toEqual({
      text: "Here are the files...",
      threadId: "abc123",
      usage: usage({ inputUncached: 50, output: 200 }),
    });
  });

  it("Gemini json and Grok Build json: usage normalization of the whole output object", () => {
    const gemini = JSON.parse(readFileSync(sample("gemini-cli.output-format-json.json"), "utf8")) as unknown;
    expect(normalizeGeminiUsage(gemini)._unsafeUnwrap()).toEqual(
      usage({ inputUncached: 24939 - 21263 + 8965 + 28, cacheRead: 21263, output: 30, reasoning: 184 }),
    );
    const grok = JSON.parse(readFileSync(sample("grok-build.output-format-json.json"), "utf8")) as unknown;
    expect(normalizeClaudeCodeUsage(grok, "grok")._unsafeUnwrap()).toEqual(
      usage({ inputUncached: 7210, cacheRead: 41000, cacheWrite: 0, output: 1893 - 412, reasoning: 412, costUsd: 0.01268905 }),
    );
  });
});

describe.runIf(present)("parsers read the tool calls of the real CLI samples", () => {
  const findings = (create: () => StreamParser, file: string) => {
    const parser = create();
    for (const line of readFileSync(sample(file), "utf8").split("\n")) parser.push(line);
    return parser.findings();
  };

  it("Claude Code: the Write tool call, with the bytes of its content", () => {
    expect(findings(createClaudeCodeParser, "claude-code.stream-json.jsonl")).toMatchObject({
      fileAccess: [{ op: "write", path: "/private/tmp/gump-cli-tests/stream-test.txt", tool: "Write", bytes: 13 }],
      toolCalls: 1,
    });
  });

  it("Cursor: the read (bytes from its result) and the write (bytes of its text), each counted once", () => {
    const found = findings(() => createClaudeStyleParser("cursor"), "cursor-agent.stream-json.jsonl");
    expect(found.fileAccess).toEqual([
      { op: "read", path: "README.md", tool: "read", bytes: Buffer.byteLength("# Project\n\nThis is a sample project...") },
      { op: "write", path: "summary.txt", tool: "write", bytes: Buffer.byteLength("# README Summary\n\nThis project contains...") },
    ]);
    expect(found.toolCalls).toBe(2);
  });

  it("pi: the read tool call, with the bytes it returned", () => {
    expect(findings(createPiParser, "pi.mode-json.first-run.jsonl")).toMatchObject({
      fileAccess: [{ op: "read", path: "hello.txt", tool: "read", bytes: Buffer.byteLength("hello from the fixture file\n") }],
      toolCalls: 1,
    });
  });

  it("Codex: the ls command is a search of the working directory", () => {
    expect(findings(createCodexParser, "codex-exec.json.jsonl")).toMatchObject({
      fileAccess: [{ op: "search", path: ".", tool: "exec_command" }],
      toolCalls: 1,
    });
  });

  it("Gemini: the Bash tool call is counted; ls -la is a search of the working directory", () => {
    expect(findings(createGeminiParser, "gemini-cli.stream-json.jsonl")).toMatchObject({
      fileAccess: [{ op: "search", path: ".", tool: "Bash" }],
      toolCalls: 1,
    });
  });
});

describe.runIf(present)("adapters read the real CLI samples through a real process", () => {
  let harness: FakeCliHarness;
  afterEach(() => harness?.cleanup?.());
  const cases: [string, (options: CliBackendOptions) => Backend, string, string, string][] = [
    ["claude-code", createClaudeCodeBackend, "claude-code/__fixtures__/fake-claude-code.mjs", "claude-code.stream-json.jsonl", "8fc99cf0-8cae-4821-aa70-c0e9a24667c3"],
    ["codex", createCodexBackend, "codex/__fixtures__/fake-codex.mjs", "codex-exec.json.jsonl", "0199a213-81c0-7800-8aa1-bbab2a035a53"],
    ["pi", createPiBackend, "pi/__fixtures__/fake-pi.mjs", "pi.mode-json.first-run.jsonl", "9ee9956f-68f9-4411-9378-579fdb646943"],
    ["opencode", createOpenCodeBackend, "opencode/__fixtures__/fake-opencode.mjs", "opencode-run.format-json.jsonl", "ses_236c713fcffel8QozOz4ca0AYK"],
    ["copilot", createCopilotBackend, "copilot/__fixtures__/fake-copilot.mjs", "copilot-cli.output-format-json.jsonl", "aa778ea0-6eab-4ce9-b87e-11d6d33dab4f"],
    ["cursor", createCursorBackend, "cursor/__fixtures__/fake-cursor.mjs", "cursor-agent.stream-json.jsonl", "c6b62c6f-7ead-4fd6-9922-e952131177ff"],
    ["gemini", createGeminiBackend, "gemini/__fixtures__/fake-gemini.mjs", "gemini-cli.stream-json.jsonl", "abc123"],
  ];
  it.each(cases)("%s", async (name, create, fake, file, threadId) => {
    harness = await createFakeCliHarness(name, create, new URL(`./${fake}`, import.meta.url));
    const result = await harness.backend.runTurn({ prompt: "replay", cwd: harness.cwd, timeoutMs: 30_000, env: { KEEL_FAKE_SAMPLE: sample(file) } });
    expect(result._unsafeUnwrap()).toMatchObject({ threadId, exitCode: 0 });
  });
});
