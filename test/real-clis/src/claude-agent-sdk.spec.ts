// The Claude Agent SDK backend (`@keel/backends/claude-agent-sdk`) over the REAL SDK, pinned in
// package.json, offline against the fake provider: @keel/testkit's backend conformance suite
// (the scenarios become prompts the provider answers by), then what only a real run shows — the
// provider's own errors, a resumed and a forked request carrying the earlier messages, progress
// (text deltas from the SDK's partial messages, the PostToolUse hook), a Keel session store.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BackendTurnEvent } from "@keel/backend";
import {
  createClaudeAgentSdkBackend,
  createClaudeSessionStore,
  type ClaudeAgentSdkBackendOptions,
  type ClaudeAgentSdkModule,
  type ClaudeAgentSdkPostToolUseInput,
  type ClaudeAgentSdkQuery,
} from "@keel/backends/claude-agent-sdk";
import { createFsStore } from "@keel/store-fs";
import { describeBackendConformance, type BackendConformanceScenario } from "@keel/testkit/backend";
import { fakeProviderSetup, startFakeProvider, type FakeProvider, type FakeProviderRequest, type FakeReply } from "@keel/testkit/provider";
import { afterEach, describe, expect, it } from "vitest";
import { readmePrinted, repoRoot } from "../../support/run-ts.js";
import { createCliSandbox, type CliSandbox } from "./cli-sandbox.js";

/** The version of shared/research/agent-sdks.md, pinned in package.json. */
const SDK_VERSION = "0.3.336";
const SDK_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", "@anthropic-ai", "claude-agent-sdk");
const MARKER = "KEEL_REAL_CLI_RUN";
const MODEL = "claude-sonnet-4-5";
/** What every plain reply bills (the SDK prices it at claude-sonnet-4-5's list price). */
const USAGE = { inputUncached: 1000, cacheRead: 200, cacheWrite: 40, output: 100 };

// Loaded from this package's node_modules by path: the SDK is not a workspace dependency (and
// the type-check must pass where it is not installed), so it is typed by the adapter's own types.
async function loadSdk(): Promise<ClaudeAgentSdkModule> {
  return (await import(pathToFileURL(join(SDK_DIR, "sdk.mjs")).href)) as ClaudeAgentSdkModule;
}

async function markedPids(value: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, "latin1").catch(() => "");
    if (environ.split("\0").includes(`${MARKER}=${value}`)) pids.push(Number(entry));
  }
  return pids;
}

interface Harness {
  provider: FakeProvider;
  sandbox: CliSandbox;
  sdk: ClaudeAgentSdkModule;
  create(options?: ClaudeAgentSdkBackendOptions): ReturnType<typeof createClaudeAgentSdkBackend>;
  /** A second host on the same provider: its own HOME, CLAUDE_CONFIG_DIR and cwd. */
  otherHost(): Promise<{ sandbox: CliSandbox; create(options?: ClaudeAgentSdkBackendOptions): ReturnType<typeof createClaudeAgentSdkBackend> }>;
  close(): Promise<void>;
}

/** The fake provider's answer to a turn call, by the scenario named in the conversation. */
function reply(request: FakeProviderRequest, cwd: string): FakeReply {
  const scenario = /KEEL-PLAY:(\w+)/.exec(request.text)?.[1] as BackendConformanceScenario | "provider_400" | "provider_429" | "provider_500" | undefined;
  switch (scenario) {
    case "hang":
      return { hang: true };
    case "transient_error":
      return { error: { status: 529, message: "fake-busy-5291" } };
    case "in_band_error":
    case "provider_400":
      return { error: { status: 400, message: "fake-bad-request-7731" } };
    case "provider_429":
      return { error: { status: 429, message: "fake-slow-down-4291" } };
    case "provider_500":
      return { error: { status: 500, message: "fake-boom-5001" } };
    case "tool_read":
      // The README's content in the conversation means the Read ran: answer it.
      if (!request.text.includes("lighthouse-42")) return { toolCalls: [{ name: "Read", arguments: { file_path: join(cwd, "README.md") } }], usage: USAGE };
      return { text: "The README names lighthouse-42.", usage: USAGE };
    default:
      return { text: "A one-sentence summary.", usage: USAGE };
  }
}

async function startHarness(): Promise<Harness> {
  const sdk = await loadSdk();
  let cwd = "";
  const provider = (await startFakeProvider({ respond: (request) => reply(request, cwd) }))._unsafeUnwrap();
  const sandbox = await createCliSandbox("claude-code", provider);
  cwd = sandbox.cwd;
  // The Claude Code setup: ANTHROPIC_BASE_URL, nonessential traffic, telemetry and retries off.
  const setup = fakeProviderSetup("claude-code", provider, sandbox, sandbox.env);
  const others: CliSandbox[] = [];
  return {
    provider,
    sandbox,
    sdk,
    create: (options = {}) =>
      createClaudeAgentSdkBackend({ query: sdk.query, inheritEnv: false, env: setup.env, model: MODEL, settingSources: [], ...options }),
    async otherHost() {
      const other = await createCliSandbox("claude-code", provider);
      others.push(other);
      const otherSetup = fakeProviderSetup("claude-code", provider, other, other.env);
      return {
        sandbox: other,
        create: (options = {}) =>
          createClaudeAgentSdkBackend({ query: sdk.query, inheritEnv: false, env: otherSetup.env, model: MODEL, settingSources: [], ...options }),
      };
    },
    async close() {
      await provider.close();
      await sandbox.cleanup();
      for (const other of others) await other.cleanup();
      // No turn may try an outside host (the refusing proxy records each attempt).
      const outside = provider.failures.filter((failure) => failure.kind === "outside_host");
      if (outside.length > 0) throw new Error(`the SDK tried to reach an outside host: ${outside.map((failure) => `${failure.method} ${failure.target}`).join(", ")}`);
    },
  };
}

describe("@anthropic-ai/claude-agent-sdk", () => {
  it(`is installed at ${SDK_VERSION}, with its platform binary`, async () => {
    const manifest = JSON.parse(await readFile(join(SDK_DIR, "package.json"), "utf8")) as { version: string };
    expect(manifest.version).toBe(SDK_VERSION);
    expect(typeof (await loadSdk()).query).toBe("function");
  });
});

describeBackendConformance({
  name: `claude-agent-sdk ${SDK_VERSION} (real SDK)`,
  resumable: true,
  // Garbage and unknown events cannot be asked of the real SDK: the recorded-message tests beside the adapter play them.
  scenarios: ["success", "in_band_error", "transient_error", "hang", "tool_read"],
  unknownThreadId: "3f2b6c1e-0000-4000-8000-00000000beef",
  toolReadPath: "README.md",
  turnTimeoutMs: 120_000,
  hangTimeoutMs: 20_000,
  // Anthropic reports the three input buckets apart and no reasoning; the SDK prices the turn
  // at claude-sonnet-4-5's list price (3 / 0.30 / 3.75 / 15 USD per million tokens: 0.00471, as
  // its own floating-point sum gives it). The session's running total after two turns is twice that.
  expectedUsage: {
    fresh: { inputUncached: 1000, cacheRead: 200, cacheWrite: 40, output: 100, reasoning: null, costUsd: 0.004710000000000001 },
    resumed: { inputUncached: 1000, cacheRead: 200, cacheWrite: 40, output: 100, reasoning: null, costUsd: 0.004710000000000001 },
  },
  setup: async () => {
    const harness = await startHarness();
    return {
      backend: harness.create(),
      cwd: harness.sandbox.cwd,
      scenario: (scenario: BackendConformanceScenario) => ({ prompt: `KEEL-PLAY:${scenario} Summarize the README.`, env: { [MARKER]: harness.sandbox.root } }),
      spawnedPids: () => markedPids(harness.sandbox.root),
      cleanup: () => harness.close(),
    };
  },
});

describe(`claude-agent-sdk ${SDK_VERSION} (real SDK): what the provider saw`, () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it.each([
    ["provider_400", 400, false, "fake-bad-request-7731"],
    ["provider_429", 429, true, "fake-slow-down-4291"],
    ["provider_500", 500, true, "fake-boom-5001"],
    ["transient_error", 529, true, "fake-busy-5291"],
  ] as const)("reports %s as backend_failed (status %i, retryable %s) with the provider's message", async (scenario, status, retryable, said) => {
    harness = await startHarness();
    const result = await harness.create().runTurn({ prompt: `KEEL-PLAY:${scenario} hello`, cwd: harness.sandbox.cwd, timeoutMs: 120_000 });
    const error = result._unsafeUnwrapErr();
    expect(error.code, error.message).toBe("backend_failed");
    expect(error.retryable).toBe(retryable);
    expect(error.details.apiErrorStatus).toBe(status);
    expect(error.message).toContain(said);
  });

  it("delivers skills natively: the staged skill's description reaches the model request", async () => {
    harness = await startHarness();
    const skill = join(harness.sandbox.root, "skills", "harbor-review");
    await mkdir(skill, { recursive: true });
    await writeFile(join(skill, "SKILL.md"), "---\nname: harbor-review\ndescription: Reviews harbor charts for KEEL-SKILL-7713.\n---\n\nRead the chart first.\n");
    // Claude Code reads the staged directory's skills only with the project setting source.
    const backend = harness.create({ settingSources: ["project"] });
    expect(backend.capabilities.skills).toBe("native");
    expect(harness.create().capabilities.skills).toBe("prompt");
    (await backend.runTurn({ prompt: "Summarize the README.", cwd: harness.sandbox.cwd, timeoutMs: 120_000, skillPaths: [skill] }))._unsafeUnwrap();
    const bodies = harness.provider.modelRequests().map((request) => JSON.stringify(request.body));
    expect(bodies.some((body) => body.includes("KEEL-SKILL-7713"))).toBe(true);
  });

  it("resumes with the earlier messages, and forks to a new session that carries them too", async () => {
    harness = await startHarness();
    const { cwd } = harness.sandbox;
    const first = (await harness.create().runTurn({ prompt: "Remember the word quokka-17.", cwd, timeoutMs: 120_000 }))._unsafeUnwrap();
    const resumed = (await harness.create().runTurn({ prompt: "Which word?", cwd, timeoutMs: 120_000, threadId: first.threadId!, ...(first.resumeState ? { resumeState: first.resumeState } : {}) }))._unsafeUnwrap();
    expect(resumed.threadId).toBe(first.threadId);
    const forked = (await harness.create({ forkSession: true }).runTurn({ prompt: "Fork: which word?", cwd, timeoutMs: 120_000, threadId: first.threadId! }))._unsafeUnwrap();
    expect(forked.threadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(forked.threadId).not.toBe(first.threadId);
    const calls = harness.provider.modelRequests();
    const resumedCall = calls.find((request) => request.text.includes("Which word?") && !request.text.includes("Fork:"))!;
    const forkedCall = calls.find((request) => request.text.includes("Fork: which word?"))!;
    expect(resumedCall.text).toContain("quokka-17");
    expect(forkedCall.text).toContain("quokka-17");
    expect(forkedCall.text).toContain("Which word?");
    // The resumed and forked turns report their own usage, not the session's running total.
    expect(resumed.usage).toMatchObject({ inputUncached: 1000, output: 100 });
    expect(forked.usage).toMatchObject({ inputUncached: 1000, output: 100 });
  });
});

describe(`claude-agent-sdk ${SDK_VERSION} (real SDK): progress, the PostToolUse hook and a Keel session store`, () => {
  let harness: Harness | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it("reports the Read's tool call, file access and the answer to onEvent, and the SDK calls the PostToolUse hook for it", async () => {
    harness = await startHarness();
    const hookInputs: ClaudeAgentSdkPostToolUseInput[] = [];
    // The real query, with the adapter's PostToolUse hook watched on its way in.
    const query: ClaudeAgentSdkQuery = (params) => {
      for (const matcher of params.options.hooks?.PostToolUse ?? []) {
        matcher.hooks = matcher.hooks.map((hook) => async (input, toolUseId, options) => {
          hookInputs.push(input);
          return hook(input, toolUseId, options);
        });
      }
      return harness!.sdk.query(params);
    };
    const events: BackendTurnEvent[] = [];
    const turn = (
      await harness.create({ query }).runTurn({ prompt: "KEEL-PLAY:tool_read Summarize the README.", cwd: harness.sandbox.cwd, timeoutMs: 120_000 }, undefined, (event) => events.push(event))
    )._unsafeUnwrap();
    const readme = join(harness.sandbox.cwd, "README.md");
    expect(hookInputs.map((input) => [input.hook_event_name, input.tool_name])).toEqual([["PostToolUse", "Read"]]);
    expect(turn.toolCalls).toBe(1);
    expect(turn.fileAccess).toEqual([expect.objectContaining({ op: "read", path: readme, tool: "Read" })]);
    expect(events.map(({ at: _at, ...event }) => event)).toEqual([
      { type: "tool_call", tool: "Read" },
      { type: "file_access", access: { op: "read", path: readme, tool: "Read" } },
      { type: "text", text: "The README names lighthouse-42." },
    ]);
  });

  it("streams the answer as the SDK's text deltas, asked for only with a listener; the deltas make the answer and the result is unchanged", async () => {
    harness = await startHarness();
    const seen: { includePartialMessages: boolean | undefined; deltas: number; types: string[] }[] = [];
    let answered = false;
    // The real query, watched: the options it got, the stream events and messages it yielded.
    const query: ClaudeAgentSdkQuery = (params) => {
      const call = { includePartialMessages: params.options.includePartialMessages, deltas: 0, types: [] as string[] };
      seen.push(call);
      const handle = harness!.sdk.query(params);
      return Object.assign(
        (async function* () {
          for await (const message of handle) {
            const record = message as { type?: string; event?: { type?: string; delta?: { type?: string } }; message?: { content?: { type?: string }[] } };
            call.types.push(record.type ?? "?");
            if (record.type === "stream_event" && record.event?.type === "content_block_delta" && record.event.delta?.type === "text_delta") call.deltas++;
            if (record.type === "assistant" && record.message?.content?.some((block) => block.type === "text")) answered = true;
            yield message;
          }
        })(),
        { close: () => handle.close?.() },
      );
    };
    const texts: { text: string; beforeMessage: boolean }[] = [];
    const backend = harness.create({ query });
    const observed = (
      await backend.runTurn({ prompt: "Summarize the README.", cwd: harness.sandbox.cwd, timeoutMs: 120_000 }, undefined, (event) => {
        if (event.type === "text") texts.push({ text: event.text, beforeMessage: !answered });
      })
    )._unsafeUnwrap();
    expect(seen[0]!.includePartialMessages).toBe(true);
    expect(seen[0]!.deltas).toBeGreaterThan(0);
    // Each text event came from a delta, before the SDK yielded the whole message, which is not told again.
    expect(texts.length).toBe(seen[0]!.deltas);
    expect(texts.every((text) => text.beforeMessage)).toBe(true);
    expect(texts.map((text) => text.text).join("")).toBe(observed.text);
    expect(observed.text).toBe("A one-sentence summary.");
    // Without a listener: no partial messages, and the same answer and usage.
    const unobserved = (await backend.runTurn({ prompt: "Summarize the README.", cwd: harness.sandbox.cwd, timeoutMs: 120_000 }))._unsafeUnwrap();
    expect(seen[1]!.includePartialMessages).toBeUndefined();
    expect(seen[1]!.types).not.toContain("stream_event");
    expect(unobserved.text).toBe(observed.text);
    expect(unobserved.usage).toEqual(observed.usage);
    expect(observed.usage).toEqual({ ...USAGE, reasoning: null, costUsd: 0.004710000000000001 });
    expect(observed.threadId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("resumes a thread on another host (no local session, another cwd) from a Keel store; without the store it cannot", async () => {
    harness = await startHarness();
    const dir = await mkdtemp(join(tmpdir(), "keel-claude-store-"));
    dirs.push(dir);
    // Two stores over one directory: the two hosts share the store, nothing else (the fs store,
    // not PostgreSQL: inside the suite's network namespace there is no database server).
    const storeA = createFsStore({ dir });
    const storeB = createFsStore({ dir });
    try {
      const first = (
        await harness.create({ sessionStore: createClaudeSessionStore({ store: storeA }) }).runTurn({ prompt: "Remember the word wombat-88.", cwd: harness.sandbox.cwd, timeoutMs: 120_000 })
      )._unsafeUnwrap();
      const hostB = await harness.otherHost();
      // Host B has never seen the session: without the store the resume fails ...
      const alone = await hostB.create().runTurn({ prompt: "Which word?", cwd: hostB.sandbox.cwd, timeoutMs: 120_000, threadId: first.threadId! });
      expect(alone._unsafeUnwrapErr().code).toBe("resume_failed");
      // ... with it, the SDK loads the session from the store and the request carries the first turn.
      const resumed = (
        await hostB
          .create({ sessionStore: createClaudeSessionStore({ store: storeB }) })
          .runTurn({ prompt: "Host B: which word?", cwd: hostB.sandbox.cwd, timeoutMs: 120_000, threadId: first.threadId! })
      )._unsafeUnwrap();
      expect(resumed.threadId).toBe(first.threadId);
      const call = harness.provider.modelRequests().find((request) => request.text.includes("Host B: which word?"))!;
      expect(call.text).toContain("wombat-88");
      expect(resumed.usage).toMatchObject({ inputUncached: 1000, output: 100 });
    } finally {
      await storeA.close();
      await storeB.close();
    }
  });
});

describe(`claude-agent-sdk ${SDK_VERSION} (real SDK): the README's example`, () => {
  const document = "packages/backends/README.md";
  /** The fake provider's answers to the README's prompts (the same as the recordings its unit test replays). */
  const replies = [
    { prompt: "Now list the open TODOs", text: "Two TODOs: chart caching and a --fix flag.", usage: { inputUncached: 600, cacheRead: 200, cacheWrite: 0, output: 11 } },
    { prompt: "Summarize README.md", text: "README.md describes Harbor, a linter for Helm charts.", usage: { inputUncached: 500, cacheRead: 100, cacheWrite: 20, output: 12 } },
  ];

  it("runs as written over the real SDK, in the agent's repository, and prints what the README says", async () => {
    const readme = await readFile(join(repoRoot, document), "utf8");
    const block = /<!-- example:claude-agent-sdk[^>]*-->\s*```ts\n([\s\S]*?\n)```/.exec(readme)?.[1];
    expect(block, "the README has the example").toBeDefined();
    // The conversation so far carries the earlier prompts: the latest one decides.
    const provider = (await startFakeProvider({ respond: (request) => {
          const reply = replies.find((candidate) => request.text.includes(candidate.prompt));
          return reply === undefined ? { error: { status: 400, message: "no README reply for this request" } } : { text: reply.text, usage: reply.usage };
        },
      }))._unsafeUnwrap();
    const sandbox = await createCliSandbox("claude-code", provider);
    // Beside this package's node_modules, so that the SDK resolves as it would for a user; run from the sandbox's repository.
    const file = join(dirname(SDK_DIR), "..", "..", `.readme-claude-agent-sdk-${process.pid}.ts`);
    try {
      await writeFile(file, block!);
      const { env } = fakeProviderSetup("claude-code", provider, sandbox, sandbox.env);
      const tsx = pathToFileURL(createRequire(join(repoRoot, "package.json")).resolve("tsx")).href;
      const output = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", tsx, "--conditions=@keel/source", file], { cwd: sandbox.cwd, env: { ...env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
        child.on("error", reject);
        child.on("close", (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
      expect(output.stderr).toBe("");
      expect(output.code).toBe(0);
      expect(output.stdout).toBe(await readmePrinted(document, "\\nprints \\(the answers are the model's[^)]*\\)\\n"));
      // Two model calls: the fresh turn and the resumed one, which carried the first.
      const calls = provider.modelRequests();
      expect(calls).toHaveLength(2);
      expect(calls[1]!.text).toContain("README.md describes Harbor");
      expect(provider.failures.filter((failure) => failure.kind === "outside_host")).toEqual([]);
    } finally {
      await rm(file, { force: true });
      await provider.close();
      await sandbox.cleanup();
    }
  });
});
