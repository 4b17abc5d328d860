import { mkdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliOptions, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { createClaudeCodeBackend, createClaudeCodeParser, type ClaudeCodeBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-claude-code.mjs", import.meta.url);
const fakeOptions = (harness: FakeCliHarness) => fakeCliOptions(fake, harness.state);

describeBackendConformance(fakeCliTarget("claude-code", true, createClaudeCodeBackend, fake));

describe("claude-code adapter", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<ClaudeCodeBackendOptions> = {}) => {
    harness = await createFakeCliHarness("claude-code", createClaudeCodeBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("reads text, thread id and usage from the recorded stream", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "What is in the README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("The README describes a small fixture project.");
    expect(result.threadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.usage).toEqual({ inputUncached: 4, cacheRead: 31252, cacheWrite: 908, output: 45, reasoning: null, costUsd: 0.0123 });
    expect(result.exitCode).toBe(0);
  });

  it("reports the Read tool call as a file read with the bytes it returned", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "What is in the README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.fileAccess).toEqual([
      { op: "read", path: "/home/keel/project/README.md", tool: "Read", bytes: Buffer.byteLength("# Project\nA small fixture project.\n") },
    ]);
    expect(result.toolCalls).toBe(1);
  });

  it("sets IS_SANDBOX=1 as root in bypassPermissions mode (Claude Code refuses the mode as root otherwise), and only then", async () => {
    const root = process.getuid?.() === 0;
    // Not inheriting process.env: the machine running the tests may set IS_SANDBOX itself.
    const { backend, cwd } = await open({ inheritEnv: false });
    await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000 });
    const accepting = createClaudeCodeBackend({ ...fakeOptions(harness), inheritEnv: false, permissionMode: "acceptEdits" });
    await accepting.runTurn({ prompt: "go", cwd, timeoutMs: 30_000 });
    const preset = createClaudeCodeBackend({ ...fakeOptions(harness), inheritEnv: false, env: { ...fakeOptions(harness).env, IS_SANDBOX: "0" } });
    await preset.runTurn({ prompt: "go", cwd, timeoutMs: 30_000 });
    const [bypass, accept, own] = await harness.invocations();
    expect(bypass!.env.IS_SANDBOX).toBe(root ? "1" : undefined);
    expect(accept!.env.IS_SANDBOX).toBeUndefined();
    expect(own!.env.IS_SANDBOX).toBe("0");
  });

  it("passes headless flags, model, resume, extra flags and the prompt in order, in cwd", async () => {
    const { backend, cwd } = await open({ permissionMode: "acceptEdits", extraArgs: ["--max-turns", "4"], model: "sonnet" });
    const first = (await backend.runTurn({ prompt: "-starts like a flag", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    await backend.runTurn({ prompt: "next", cwd, timeoutMs: 30_000, threadId: first.threadId!, model: "opus" });
    const [fresh, resumed] = await harness.invocations();
    expect(fresh!.argv).toEqual([
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "acceptEdits",
      "--model",
      "sonnet",
      "--max-turns",
      "4",
      " -starts like a flag",
    ]);
    expect(fresh!.cwd).toBe(cwd);
    expect(resumed!.argv).toEqual([
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "acceptEdits",
      "--model",
      "opus",
      "--resume",
      first.threadId,
      "--max-turns",
      "4",
      "next",
    ]);
  });

  it("delivers skills natively: links in a temporary .claude/skills passed with --add-dir, removed afterwards", async () => {
    const { backend, cwd, root } = await open();
    const own = join(root, "skills", "own", "release-notes");
    const reference = join(root, "skills", "reference", "release-notes");
    const other = join(root, "skills", "reference", "triage");
    for (const dir of [own, reference, other]) await mkdir(dir, { recursive: true });
    await writeFile(join(other, "SKILL.md"), "---\nname: triage\ndescription: Use when triaging.\n---\n");
    // A skill is named by its directory or by its SKILL.md; the first of two same-named skills wins.
    const skillPaths = [own, reference, join(other, "SKILL.md")];
    (await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000, skillPaths }))._unsafeUnwrap();
    const [call] = await harness.invocations();
    const addDir = call!.argv[call!.argv.indexOf("--add-dir") + 1]!;
    // --add-dir is variadic in the real CLI: a flag must follow its value, or it eats the prompt.
    expect(call!.argv[call!.argv.indexOf("--add-dir") + 2]).toMatch(/^--/);
    expect(call!.argv.at(-1)).toBe("go");
    expect((call as unknown as { parsed: { skills: unknown[] } }).parsed.skills).toEqual([
      { name: "release-notes", target: own },
      { name: "triage", target: other },
    ]);
    await expect(stat(addDir)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("refuses a skill path that does not exist", async () => {
    const { backend, cwd, root } = await open();
    const result = await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000, skillPaths: [join(root, "missing")] });
    expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("reports a crash with its exit code and stderr as backend_failed", async () => {
    const { backend, cwd } = await open();
    const error = (await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000, env: { KEEL_FAKE_SCENARIO: "crash" } }))._unsafeUnwrapErr();
    expect(error.code).toBe("backend_failed");
    expect(error.details).toMatchObject({ backend: "claude-code", exitCode: 3, stderr: "fatal: the fake CLI crashed on purpose" });
    expect(error.details.threadId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("is unavailable when the command is not installed", async () => {
    const { cwd } = await open();
    const backend = createClaudeCodeBackend({ command: join(cwd, "no-such-claude") });
    const error = (await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000 }))._unsafeUnwrapErr();
    expect(error.code).toBe("unavailable");
    expect(error.retryable).toBe(false);
  });

  it("throws invalid_input at once for bad options", () => {
    expect(() => createClaudeCodeBackend({ permissionMode: "yolo" as never })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(() => createClaudeCodeBackend({ unknown: 1 } as never)).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });
});

describe("claude-code stream parser: the result event decides success", () => {
  const findingsOf = (result: Record<string, unknown>) => {
    const parser = createClaudeCodeParser();
    parser.push(JSON.stringify({ type: "system", subtype: "init", session_id: "s-1" }));
    parser.push(JSON.stringify({ type: "result", session_id: "s-1", duration_ms: 1, ...result }));
    return parser.findings();
  };

  // Claude Code has been seen to exit 0 with `is_error: true` (shared/research/backends.md): both fields count.
  it("an in-band error when is_error is true, though the subtype says success", () => {
    expect(findingsOf({ subtype: "success", is_error: true, result: "API Error: 401 invalid x-api-key" })).toMatchObject({
      terminal: true,
      inBandError: "API Error: 401 invalid x-api-key",
    });
  });

  it("an in-band error when the subtype is not success, though is_error is false", () => {
    expect(findingsOf({ subtype: "error_max_turns", is_error: false, errors: ["Reached maximum number of turns (2)"] })).toMatchObject({
      terminal: true,
      inBandError: "Reached maximum number of turns (2)",
    });
  });

  it("no error for a successful result", () => {
    expect(findingsOf({ subtype: "success", is_error: false, result: "done" })).toMatchObject({ terminal: true, text: "done", inBandError: null, threadId: "s-1" });
  });
});
