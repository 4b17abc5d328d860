// The real pi CLI (a root devDependency) against a local OpenAI-compatible server: fresh turn,
// resume, gone thread, in-band model error with exit code 0, abort and native skill delivery.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Backend } from "@keel/backend";
import { startFakeOpenAiServer, type FakeOpenAiServer, type FakeReply, type FakeRequest } from "../__fixtures__/fake-openai-server.js";
import { createPiBackend } from "./index.js";

function findPiCli(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error("@mariozechner/pi-coding-agent is not installed: run pnpm install at the repository root");
    dir = parent;
  }
}

describe("pi adapter against the real pi CLI", () => {
  let root: string;
  let cwd: string;
  let server: FakeOpenAiServer;
  let reply: (request: FakeRequest) => FakeReply;
  let backend: Backend;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "keel-pi-real-"));
    cwd = join(root, "project");
    const agentDir = join(root, "agent");
    await mkdir(cwd, { recursive: true });
    await mkdir(agentDir, { recursive: true });
    reply = (request) => ({ text: `reply #${server.requests.length} to ${request.body.messages ? "chat" : "?"}` });
    server = await startFakeOpenAiServer((request) => reply(request));
    const provider = {
      baseUrl: server.url,
      api: "openai-completions",
      apiKey: "fake",
      compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
      models: [{ id: "fake-model" }],
    };
    await writeFile(join(agentDir, "models.json"), JSON.stringify({ providers: { fake: provider } }));
    backend = createPiBackend({
      command: process.execPath,
      commandArgs: [findPiCli()],
      provider: "fake",
      model: "fake-model",
      extraArgs: ["--no-extensions", "--no-context-files"],
      env: { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" },
      killGraceMs: 1000,
    });
  });
  afterEach(async () => {
    await server.close();
    await rm(root, { recursive: true, force: true });
  });

  it("runs a fresh turn and resumes it: the provider sees the whole thread", async () => {
    const first = (await backend.runTurn({ prompt: "first question", cwd, timeoutMs: 60_000 }))._unsafeUnwrap();
    expect(first.text).toBe("reply #1 to chat");
    expect(first.threadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.exitCode).toBe(0);
    // 100 prompt tokens of which 20 cached; pi reports input without the cache.
    expect(first.usage).toMatchObject({ inputUncached: 80, cacheRead: 20, cacheWrite: 0, output: 7, reasoning: null });

    const second = (await backend.runTurn({ prompt: "second question", cwd, timeoutMs: 60_000, threadId: first.threadId! }))._unsafeUnwrap();
    expect(second.threadId).toBe(first.threadId);
    const sent = JSON.stringify(server.requests[1]!.body.messages);
    expect(sent).toContain("first question");
    expect(sent).toContain("reply #1 to chat");
    expect(sent).toContain("second question");
  });

  it("classifies an unknown session id as resume_failed", async () => {
    const error = (await backend.runTurn({ prompt: "x", cwd, timeoutMs: 60_000, threadId: "0000dead-0000-4000-8000-000000000000" }))._unsafeUnwrapErr();
    expect(error.code).toBe("resume_failed");
    expect(error.details).toMatchObject({ exitCode: 1, threadId: "0000dead-0000-4000-8000-000000000000" });
  });

  it("reports a model error as backend_failed although pi exits 0", async () => {
    reply = () => ({ status: 400, body: { error: { message: "context too long", type: "invalid_request_error" } } });
    const error = (await backend.runTurn({ prompt: "x", cwd, timeoutMs: 60_000 }))._unsafeUnwrapErr();
    expect(error.code).toBe("backend_failed");
    expect(error.details.exitCode).toBe(0);
    expect(error.details.threadId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("aborts a hanging model call: keeps the session id and leaves no process holding the connection", async () => {
    const controller = new AbortController();
    reply = () => {
      // The request reached the provider: pi has started and printed its session header.
      controller.abort();
      return { hang: true };
    };
    const error = (await backend.runTurn({ prompt: "x", cwd, timeoutMs: 60_000 }, controller.signal))._unsafeUnwrapErr();
    expect(error.code).toBe("aborted");
    expect(error.details.threadId).toMatch(/^[0-9a-f-]{36}$/);
    const deadline = Date.now() + 10_000;
    while (server.openConnections() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(server.openConnections()).toBe(0);
  });

  it("delivers skills natively: pi lists exactly the given skill to the model", async () => {
    const skill = join(root, "skills", "fixture-skill");
    await mkdir(skill, { recursive: true });
    await writeFile(join(skill, "SKILL.md"), "---\nname: fixture-skill\ndescription: Use when testing Keel skill delivery.\n---\n# Fixture\n");
    (await backend.runTurn({ prompt: "hello", cwd, timeoutMs: 60_000, skillPaths: [skill] }))._unsafeUnwrap();
    const system = JSON.stringify(server.requests[0]!.body.messages);
    expect(system).toContain("<name>fixture-skill</name>");
    expect(system).toContain(join(skill, "SKILL.md"));
  });
});
