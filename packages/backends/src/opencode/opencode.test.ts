import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeCliHarness, fakeCliOptions, fakeCliTarget, type FakeCliHarness } from "../__fixtures__/fake-cli-target.js";
import { OPENCODE_OFFLINE_ENV, createOpenCodeBackend, type OpenCodeBackendOptions } from "./index.js";

const fake = new URL("./__fixtures__/fake-opencode.mjs", import.meta.url);

describeBackendConformance({ ...fakeCliTarget("opencode", true, createOpenCodeBackend, fake), unknownThreadId: "ses_doesnotexist" });

describe("opencode adapter", () => {
  let harness: FakeCliHarness;
  const open = async (options: Partial<OpenCodeBackendOptions> = {}) => {
    harness = await createFakeCliHarness("opencode", createOpenCodeBackend, fake, options);
    return harness;
  };
  afterEach(() => harness?.cleanup?.());

  it("answers with the last step's text and sums tokens and cost over steps", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("The README introduces a small fixture project.");
    expect(result.threadId).toMatch(/^ses_/);
    expect(result.usage.inputUncached).toBe(7120);
    expect(result.usage).toMatchObject({ cacheRead: 11000, cacheWrite: 110, output: 44, reasoning: 6 });
    expect(result.usage.costUsd).toBeCloseTo(0.003, 10);
  });

  it("passes -m, the permission bypass, a title for a new session or -s, and the prompt on stdin, unchanged", async () => {
    const { backend, cwd } = await open({ skipPermissions: false, extraArgs: ["--agent", "build"] });
    const prompt = 'Say "something" -- with spaces\nand a second line';
    const first = (await backend.runTurn({ prompt, cwd, timeoutMs: 30_000, model: "anthropic/claude-sonnet-4-6" }))._unsafeUnwrap();
    (await backend.runTurn({ prompt: "-two", cwd, timeoutMs: 30_000, threadId: first.threadId! }))._unsafeUnwrap();
    const [fresh, resumed] = await harness.invocations();
    expect(fresh!.argv).toEqual(["run", "--format", "json", "-m", "anthropic/claude-sonnet-4-6", "--title", "keel", "--agent", "build"]);
    expect((fresh as unknown as { parsed: { prompt: string } }).parsed.prompt).toBe(prompt);
    expect(resumed!.argv).toEqual(["run", "--format", "json", "-s", first.threadId, "--agent", "build"]);
    expect((resumed as unknown as { parsed: { prompt: string } }).parsed.prompt).toBe("-two");
  });

  it("takes a prompt longer than the argument limit (it goes on stdin)", async () => {
    const { backend, cwd } = await open();
    const prompt = "x".repeat(200 * 1024);
    (await backend.runTurn({ prompt, cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    const [call] = await harness.invocations();
    expect((call as unknown as { parsed: { prompt: string } }).parsed.prompt).toHaveLength(prompt.length);
  });

  it("switches off OpenCode's background network use unless the host set the variables itself", async () => {
    const { backend, cwd } = await open({ env: { OPENCODE_DISABLE_SHARE: "0" } });
    (await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    const off = createOpenCodeBackend({ ...fakeCliOptions(fake, harness.state), offline: false });
    (await off.runTurn({ prompt: "go", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    const [offline, online] = await harness.invocations();
    expect(offline!.env).toMatchObject({ ...OPENCODE_OFFLINE_ENV, OPENCODE_DISABLE_SHARE: "0" });
    expect(Object.keys(online!.env).filter((key) => key.startsWith("OPENCODE_DISABLE_") || key === "NPM_CONFIG_OFFLINE")).toEqual([]);
  });

  it("reports the read tool part as a file read", async () => {
    const { backend, cwd } = await open();
    const result = (await backend.runTurn({ prompt: "README?", cwd, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.fileAccess).toEqual([{ op: "read", path: "README.md", tool: "read" }]);
    expect(result.toolCalls).toBe(1);
  });

  it("delivers skills through OPENCODE_CONFIG_CONTENT skills.paths, merged with the host's config", async () => {
    const { backend, cwd, root } = await open({ env: { OPENCODE_CONFIG_CONTENT: JSON.stringify({ model: "x/y", skills: { paths: ["/team/skills"] } }) } });
    const skill = join(root, "skills", "triage");
    await mkdir(skill, { recursive: true });
    (await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000, skillPaths: [skill] }))._unsafeUnwrap();
    const [call] = await harness.invocations();
    const config = JSON.parse(call!.env.OPENCODE_CONFIG_CONTENT!) as { model: string; skills: { paths: string[] } };
    expect(config.model).toBe("x/y");
    expect(config.skills.paths[0]).toBe("/team/skills");
    expect((call as unknown as { parsed: { staged: unknown[] } }).parsed.staged[1]).toEqual({
      path: config.skills.paths[1],
      skills: [{ name: "triage", target: skill }],
    });
  });

  it("refuses skills when the host's OPENCODE_CONFIG_CONTENT is not a JSON object", async () => {
    const { backend, cwd, root } = await open({ env: { OPENCODE_CONFIG_CONTENT: "[1]" } });
    const skill = join(root, "skills", "triage");
    await mkdir(skill, { recursive: true });
    expect((await backend.runTurn({ prompt: "go", cwd, timeoutMs: 30_000, skillPaths: [skill] }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
