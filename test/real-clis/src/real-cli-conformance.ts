// The backend behaviours every real CLI must show through its Keel adapter, offline, against the
// fake provider. One call per CLI (`describeRealCli("pi")`) in `<cli>.spec.ts`. The CLI runs in
// its own sandbox (cli-sandbox.ts); every assertion about what the CLI did is made from what the
// provider received, not from what the CLI says about itself.
import { execFile } from "node:child_process";
import { cp, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import type { BackendTurnRequest as TurnRequest, BackendTurnResult as TurnResult } from "@keel/backend";
import type { KeelError, Usage } from "@keel/core";
import { reportedUsage, startFakeProvider, type FakeProvider, type FakeProviderRequest, type FakeReply, type FakeUsage } from "@keel/testkit/provider";
import type { Result } from "neverthrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REAL_CLI_VERSIONS, cliBinary, cliInstalled, type RealCliId } from "./cli-sandbox.js";
import { createRealCliSetup, type RealCliSetup } from "./cli-setups.js";

/** Per-CLI timing of the suite (a turn of pi takes ~10 s on a 2-core machine). */
export interface RealCliOptions {
  /** Timeout of an ordinary turn (default 120 s). */
  turnTimeoutMs?: number;
  /**
   * Least turn timeout of the hang test (default 40 s). It is raised to 1.5 times the fresh
   * turn's duration plus 10 s, so that a CLI that starts slowly on a loaded machine still
   * reaches the hanging provider before its turn times out.
   */
  hangTimeoutMs?: number;
  /** A thread id of the CLI's own shape that no run has made. */
  unknownThreadId: string;
}

const MARKER = "KEEL_REAL_CLI_RUN";

/** Pids of live processes whose environment holds `MARKER=<value>` (the CLI and everything it started). */
async function markedPids(value: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = await readFile(`/proc/${entry}/environ`, "latin1");
      if (environ.split("\0").includes(`${MARKER}=${value}`)) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

async function waitUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await probe();
  }
  return value;
}

function ok(result: Result<TurnResult, KeelError>): TurnResult {
  if (result.isErr()) throw new Error(`expected a successful turn, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

function failed(result: Result<TurnResult, KeelError>, code: KeelError["code"]): KeelError {
  if (result.isOk()) throw new Error(`expected ${code}, got a successful turn: ${JSON.stringify(result.value).slice(0, 500)}`);
  expect(result.error.code, result.error.message).toBe(code);
  return result.error;
}

function sum(usages: readonly Usage[]): Usage {
  const add = (key: keyof Usage) => (usages.some((usage) => usage[key] === null) ? null : usages.reduce((total, usage) => total + (usage[key] ?? 0), 0));
  return { inputUncached: add("inputUncached"), cacheRead: add("cacheRead"), cacheWrite: add("cacheWrite"), output: add("output"), reasoning: add("reasoning"), costUsd: null };
}

/**
 * The usage the turn must report: exactly what the provider billed for the model calls of this
 * turn. Input (all three buckets together), cache reads and the whole output (output plus
 * reasoning) must match exactly; the cache-write bucket where the wire format carries it;
 * reasoning exactly when the adapter reports it apart (a CLI that does not split it out keeps it
 * in `output` and reports `null`).
 * The fake bills no money, so `costUsd` (priced by the CLI itself) is not compared.
 */
function expectBilled(actual: Usage, billed: Usage): void {
  const input = (usage: Usage) => (usage.inputUncached ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0);
  const output = (usage: Usage) => (usage.output ?? 0) + (usage.reasoning ?? 0);
  expect({ input: input(actual), cacheRead: actual.cacheRead, output: output(actual) }, `reported ${JSON.stringify(actual)}, billed ${JSON.stringify(billed)}`).toEqual({
    input: input(billed),
    cacheRead: billed.cacheRead,
    output: output(billed),
  });
  if (billed.cacheWrite !== null) expect(actual.cacheWrite).toBe(billed.cacheWrite);
  if (actual.reasoning !== null) expect(actual.reasoning).toBe(billed.reasoning);
}

/** Registers the real-CLI behaviours of `cli` (one describe block). */
export function describeRealCli(cli: RealCliId, options: RealCliOptions): void {
  const turnTimeoutMs = options.turnTimeoutMs ?? 120_000;
  const hangTimeoutMs = options.hangTimeoutMs ?? 40_000;

  describe(`${cli} ${REAL_CLI_VERSIONS[cli]} (real CLI, offline)`, () => {
    let provider: FakeProvider;
    let setup: RealCliSetup;
    let respond: (request: FakeProviderRequest) => FakeReply | undefined = () => undefined;
    let freshTurnMs = 0;
    let firstThread: { threadId: string; text: string; resumeState?: TurnResult["resumeState"] } | undefined;

    beforeAll(async () => {
      provider = (await startFakeProvider({ respond: (request) => setup.sideCall(request) ?? respond(request) }))._unsafeUnwrap();
      setup = await createRealCliSetup(cli, provider);
    });
    afterAll(async () => {
      await provider.close();
      await setup.sandbox.cleanup();
    });

    const outsideAttempts = (from: number) => provider.failures.slice(from).filter((failure) => failure.kind === "outside_host");
    /**
     * Runs one turn, answering its model calls with `replies` in order, and returns the result
     * with the calls it made. Every turn fails on a connection attempt to any outside host (the
     * refusing proxy records each CONNECT and proxied request), whatever else the test checks.
     */
    const turn = async (replies: readonly FakeReply[], request: Partial<TurnRequest> = {}) => {
      const from = provider.requests.length;
      const failuresFrom = provider.failures.length;
      const queue = [...replies];
      respond = () => queue.shift() ?? { error: { status: 400, message: "fake provider: the test scripted no more calls for this turn" } };
      const env = { [MARKER]: setup.sandbox.root, ...request.env };
      const result = await setup.backend.runTurn({ prompt: "Say hello.", cwd: setup.sandbox.cwd, timeoutMs: turnTimeoutMs, ...request, env });
      expect(outsideAttempts(failuresFrom), `${cli} tried to reach an outside host during the turn`).toEqual([]);
      const calls = provider.requests.slice(from).filter((call) => call.format !== null);
      return { result, calls, turnCalls: calls.filter((call) => !setup.isSideCall(call)) };
    };
    const billedFor = (calls: readonly FakeProviderRequest[]) =>
      sum(calls.map((call) => reportedUsage(call.format ?? setup.format, "text" in (call.reply ?? {}) || "toolCalls" in (call.reply ?? {}) ? (call.reply as { usage?: FakeUsage }).usage : undefined)));
    const expectNothingLeft = () => expect(provider.failures.filter((failure) => failure.kind === "outside_host" || failure.kind === "unknown_route")).toEqual([]);

    it("is installed at the pinned version", async () => {
      expect(cliInstalled(cli), `${cliBinary(cli)} is missing: run pnpm test:clis (it installs the pinned CLIs)`).toBe(true);
      const { stdout, stderr } = await promisify(execFile)(cliBinary(cli), ["--version"], { env: setup.sandbox.env, timeout: 60_000 });
      expect(`${stdout}${stderr}`).toContain(REAL_CLI_VERSIONS[cli]);
    });

    it("runs a fresh turn: the text, a thread id and exactly the usage the provider billed", async () => {
      const usage = setup.format === "anthropic-messages" ? { inputUncached: 310, cacheRead: 40, cacheWrite: 25, output: 17 } : { inputUncached: 310, cacheRead: 40, output: 17, reasoning: 5 };
      const { result, calls, turnCalls } = await turn([{ text: "Fresh answer: amber-harbor.", usage }], { prompt: "Name a colour and a place." });
      const value = ok(result);
      expect(value.text).toContain("Fresh answer: amber-harbor.");
      expect(value.threadId).toMatch(/\S/);
      expect(turnCalls).toHaveLength(1);
      expect(turnCalls[0]?.text).toContain("Name a colour and a place.");
      expectBilled(value.usage, billedFor(calls));
      expectNothingLeft();
      freshTurnMs = value.durationMs;
      firstThread = { threadId: value.threadId ?? "", text: "Fresh answer: amber-harbor.", ...(value.resumeState ? { resumeState: value.resumeState } : {}) };
    });

    it("resumes that thread: the provider sees the earlier messages, the usage is this turn's only", async () => {
      expect(firstThread, "the fresh turn failed first").toBeDefined();
      const usage = { inputUncached: 120, cacheRead: 300, output: 9 };
      const { result, calls, turnCalls } = await turn([{ text: "Second answer: still amber.", usage }], {
        prompt: "And the second question?",
        threadId: firstThread!.threadId,
        ...(firstThread!.resumeState ? { resumeState: firstThread!.resumeState } : {}),
      });
      const value = ok(result);
      expect(value.threadId).toBe(firstThread!.threadId);
      expect(value.text).toContain("Second answer: still amber.");
      expect(turnCalls).toHaveLength(1);
      expect(turnCalls[0]?.text).toContain("Name a colour and a place.");
      expect(turnCalls[0]?.text).toContain(firstThread!.text);
      expect(turnCalls[0]?.text).toContain("And the second question?");
      expectBilled(value.usage, billedFor(calls));
    });

    it("runs a scripted tool call in its cwd, and the tool's result reaches the next call", async () => {
      const { result, calls, turnCalls } = await turn(
        [
          { toolCalls: [setup.shellTool("cat README.md")], usage: { inputUncached: 200, output: 11 } },
          { text: "The secret word is lighthouse-42.", usage: { inputUncached: 260, cacheRead: 20, output: 8 } },
        ],
        { prompt: "What is the secret word in the README?" },
      );
      const value = ok(result);
      expect(turnCalls).toHaveLength(2);
      expect(turnCalls[0]?.text).not.toContain("lighthouse-42");
      expect(turnCalls[1]?.text).toContain("lighthouse-42");
      expect(value.text).toContain("lighthouse-42");
      expectBilled(value.usage, billedFor(calls));
      expect(value.toolCalls).toBeGreaterThanOrEqual(1);
    });

    it("reports the file its read tool read in fileAccess (the path as the tool saw it, inside the cwd)", async () => {
      const { result, turnCalls } = await turn(
        [{ toolCalls: [setup.readTool(join(setup.sandbox.cwd, "notes.txt"))] }, { text: "Two notes." }],
        { prompt: "Read notes.txt." },
      );
      const value = ok(result);
      expect(turnCalls[1]?.text).toContain("second note");
      // Adapters report the path as the tool saw it; the runtime makes agent.io paths relative to the cwd.
      const cwd = setup.sandbox.cwd;
      expect(value.fileAccess.map((access) => ({ op: access.op, path: relative(cwd, resolve(cwd, access.path)) }))).toContainEqual({ op: "read", path: "notes.txt" });
      expect(value.toolCalls).toBeGreaterThanOrEqual(1);
    });

    it("classifies an unknown thread id as resume_failed", async () => {
      const { result } = await turn([{ text: "should not be asked" }], { threadId: options.unknownThreadId });
      const error = failed(result, "resume_failed");
      expect(error.details.threadId).toBe(options.unknownThreadId);
    });

    it("reports a provider error (400) as backend_failed, not retryable, with the provider's message", async () => {
      const { result } = await turn([{ error: { status: 400, message: "fake-bad-request-7731" } }]);
      const error = failed(result, "backend_failed");
      expect(error.retryable).toBe(false);
      expect(error.message).toContain("fake-bad-request-7731");
    });

    // The provider's message names nothing transient: the CLI's report of the status (or its own
    // words for it) must be what makes the error retryable. Twelve answers cover CLIs that retry.
    it.each([
      { status: 500, message: "fake-server-fault-5001" },
      { status: 529, message: "fake-busy-5291" },
    ])("reports a transient provider error ($status) as backend_failed and retryable", async ({ status, message }) => {
      const transient: FakeReply = { error: { status, message, retryAfterSeconds: 0 } };
      const { result } = await turn(Array.from({ length: 12 }, () => transient));
      const error = failed(result, "backend_failed");
      expect(error.retryable, error.message).toBe(true);
      // Codex 0.171.0 prints its own words for a 5xx ("high demand … temporary errors"), not the provider's.
      if (!(cli === "codex" && status === 500)) expect(error.message).toContain(message);
    });

    it("times out on a provider that hangs: timeout, the whole process group gone", async () => {
      const timeoutMs = Math.min(Math.max(hangTimeoutMs, Math.round(1.5 * freshTurnMs) + 10_000), 180_000);
      const { result, turnCalls } = await turn([{ hang: true }], { timeoutMs });
      failed(result, "timeout");
      expect(turnCalls.map((call) => call.reply)).toContainEqual({ hang: true });
      const alive = await waitUntil(() => markedPids(setup.sandbox.root), (pids) => pids.length === 0, 10_000);
      expect(alive, "processes of the turn still running").toEqual([]);
    });

    it("delivers skills the way its capability says, as the provider's request shows", async () => {
      const skillDir = join(setup.sandbox.root, "skills", "harbor-tides");
      await mkdir(skillDir, { recursive: true });
      const description = "Use when asked about the tides of Harbor (skill-marker-tide-9137).";
      await writeFile(join(skillDir, "SKILL.md"), `---\nname: harbor-tides\ndescription: ${description}\n---\n\nTides come twice a day.\n`);
      const delivery = setup.backend.capabilities.skills;
      const request: Partial<TurnRequest> = { prompt: "When are the tides?" };
      if (delivery === "native") request.skillPaths = [skillDir];
      if (delivery === "staged") await cp(skillDir, join(setup.sandbox.cwd, ".agents", "skills", "harbor-tides"), { recursive: true });
      if (delivery === "prompt") request.prompt = `Skills: harbor-tides — ${description}\n\nWhen are the tides?`;
      const { result, turnCalls } = await turn([{ text: "Twice a day." }], request);
      ok(result);
      expect(JSON.stringify(turnCalls[0]?.body)).toContain("skill-marker-tide-9137");
    });

    it("made no connection attempt to an outside host in any turn (nor after one)", () => {
      expect(outsideAttempts(0)).toEqual([]);
    });
  });
}
