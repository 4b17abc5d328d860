import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Backend } from "@keel/backend";
import { createClaudeAgentSdkBackend } from "@keel/backends/claude-agent-sdk";
import type { KeelStore } from "@keel/store";
import {
  createFakeProviderSandbox,
  fakeProviderSetup,
  startFakeProvider,
  type FakeProvider,
  type FakeProviderCli,
  type FakeProviderRequest,
  type FakeReply,
  type FakeToolCall,
} from "@keel/testkit/provider";
import { DEMO_AI_SDK_FILE_ACCESS, demoAiSdkTools } from "./demo-ai-sdk-tools.js";
import { createCliBackendById } from "./demo-backends.js";
import { demoProviderReply, type DemoProviderContext } from "./demo-provider-script.js";
import type { DemoAiSdkPackages, DemoSdkPackages } from "./demo-sdk-packages.js";

/** A real backend pointed at a running fake provider that plays the demo mission. */
export interface DemoFakeProviderBackend {
  backend: Backend;
  provider: FakeProvider;
  /** Stops the provider. */
  close(): Promise<void>;
}

/** What runs the demo's turns against the fake provider: a CLI on `PATH`, or an in-process SDK with its loaded packages. */
export type DemoFakeProviderTarget = FakeProviderCli | DemoSdkPackages;

/** Where the demo runs: its directory, its repository (the agent's cwd) and its store. */
export interface DemoFakeProviderPaths {
  dir: string;
  workspace: string;
  store: KeelStore;
}

/** The model the AI SDK demo asks the fake provider for (over its OpenAI Chat Completions route). */
const AI_SDK_DEMO_MODEL = "fake-model";

/** How a target is pointed at the provider: its backend, the tool call that makes it read a file, its side calls. */
interface TargetSetup {
  backend: () => Backend;
  readTool: (path: string) => FakeToolCall;
  sideCall: (request: FakeProviderRequest) => FakeReply | undefined;
}

/**
 * Starts the fake provider (127.0.0.1, every outside connection refused) scripted with
 * {@link demoProviderReply}, and builds the backend of `target` pointed at it:
 *
 * - a CLI (`pi`, `codex`, …): its Keel adapter, with its own `HOME`, config directory, XDG
 *   directories and `TMPDIR` under `<dir>/cli` and only `PATH` of the caller's environment (the
 *   CLI is the one installed on `PATH`);
 * - `claude-agent-sdk`: `@keel/backends/claude-agent-sdk` over the SDK's `query`, whose Claude Code
 *   child gets the same sandbox and Claude Code's setup (`ANTHROPIC_BASE_URL`, nonessential traffic off);
 * - `ai-sdk`: `@keel/ai-sdk` over an OpenAI-compatible model on the provider's Chat Completions
 *   route, with `read`, `write` and `grep` tools over the demo repository, its threads kept in the
 *   demo's store.
 *
 * Closing it writes what the server saw to `<dir>/cli/provider-requests.jsonl` and
 * `provider-failures.json`. `reply` answers each model call (default: the demo mission's
 * {@link demoProviderReply}).
 */
export async function startDemoFakeProvider(
  target: DemoFakeProviderTarget,
  paths: DemoFakeProviderPaths,
  path: string,
  reply: (request: FakeProviderRequest, context: DemoProviderContext) => FakeReply = demoProviderReply,
): Promise<DemoFakeProviderBackend> {
  const root = join(paths.dir, "cli");
  await mkdir(root, { recursive: true });
  let setup: TargetSetup | undefined;
  const readTool = (file: string) => setup?.readTool(file) ?? { name: "read", arguments: {} };
  const started = await startFakeProvider({ respond: (request) => setup?.sideCall(request) ?? reply(request, { workspace: paths.workspace, readTool }) });
  if (started.isErr()) throw started.error;
  const provider = started.value;
  const close = async () => {
    await provider.close();
    // What the model server saw, for the curious and for tests: one line per request, and
    // anything it could not answer as scripted (an outside host, an unknown route).
    const lines = provider.requests.map((request) =>
      JSON.stringify({ index: request.index, method: request.method, path: request.path, format: request.format, reply: request.reply }),
    );
    await writeFile(join(root, "provider-requests.jsonl"), lines.length > 0 ? `${lines.join("\n")}\n` : "");
    await writeFile(join(root, "provider-failures.json"), `${JSON.stringify(provider.failures, null, 2)}\n`);
  };
  try {
    setup = typeof target === "string" || target.kind === "claude-agent-sdk" ? await childSetup(target, provider, root, path) : aiSdkSetup(target, provider, paths);
    return { backend: setup.backend(), provider, close };
  } catch (error) {
    await provider.close();
    throw error;
  }
}

/** A CLI, or the Claude Agent SDK's Claude Code child: a sandbox under `root` and the CLI's fake-provider setup. */
async function childSetup(target: FakeProviderCli | Extract<DemoSdkPackages, { kind: "claude-agent-sdk" }>, provider: FakeProvider, root: string, path: string): Promise<TargetSetup> {
  const sandbox = await createFakeProviderSandbox(root, path);
  // The Claude Agent SDK runs Claude Code: the same environment, model and tools as the CLI's.
  const setup = fakeProviderSetup(typeof target === "string" ? target : "claude-code", provider, sandbox, sandbox.envWith(provider));
  for (const [file, text] of Object.entries(setup.files)) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  const backend = (): Backend => {
    if (typeof target !== "string") {
      // No user or project settings: the sandbox's Claude Code sees only what the demo gives it.
      return createClaudeAgentSdkBackend({ query: target.query, inheritEnv: false, env: setup.env, settingSources: [], ...(setup.adapter.model ? { model: setup.adapter.model } : {}) });
    }
    const made = createCliBackendById(target, { inheritEnv: false, env: setup.env, ...setup.adapter });
    if (made.isErr()) throw made.error;
    return made.value;
  };
  return { backend, readTool: setup.readTool, sideCall: setup.sideCall };
}

/** The AI SDK: an OpenAI-compatible model on the provider, the demo's file tools, the threads in the demo's store. */
function aiSdkSetup(packages: DemoAiSdkPackages, provider: FakeProvider, paths: DemoFakeProviderPaths): TargetSetup {
  const model = packages.createOpenAICompatible({ name: "fake", baseURL: provider.openAiUrl, apiKey: "fake-key", includeUsage: true })(AI_SDK_DEMO_MODEL);
  const backend = () =>
    packages.createAiSdkBackend({
      model,
      tools: demoAiSdkTools(paths.workspace),
      toolFileAccess: DEMO_AI_SDK_FILE_ACCESS,
      system: `You are a coding agent in the repository at ${paths.workspace}. Read files with read, search with grep, change them with write.`,
      store: paths.store,
      // The provider's answer is the turn's outcome, as the CLIs run with their retries off.
      maxRetries: 0,
    });
  return { backend, readTool: (file) => ({ name: "read", arguments: { path: file } }), sideCall: () => undefined };
}
