// How each real CLI is pointed at the fake provider (shared/research/real-clis.md), and the
// facts a behaviour test needs about it: its wire format, the tool it runs a shell command
// with, and the answers to the side calls it makes besides the turn itself.
import { writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Backend } from "@keel/backend";
import { createClaudeCodeBackend } from "@keel/backends/claude-code";
import { createCodexBackend } from "@keel/backends/codex";
import { createCopilotBackend } from "@keel/backends/copilot";
import { createGeminiBackend } from "@keel/backends/gemini";
import { createOpenCodeBackend } from "@keel/backends/opencode";
import { createPiBackend } from "@keel/backends/pi";
import type { FakeProvider, FakeProviderFormat, FakeProviderRequest, FakeReply, FakeToolCall } from "@keel/testkit/provider";
import { cliBinary, createCliSandbox, type CliSandbox, type RealCliId } from "./cli-sandbox.js";

/** One CLI ready to run through its Keel adapter. */
export interface RealCliSetup {
  cli: RealCliId;
  sandbox: CliSandbox;
  backend: Backend;
  /** The CLI's whole environment (the adapter runs with `inheritEnv: false`). */
  env: Record<string, string>;
  /** The wire format the CLI speaks to the provider here. */
  format: FakeProviderFormat;
  /** The tool call that makes the CLI run `command` in its shell, in its cwd. */
  shellTool(command: string): FakeToolCall;
  /** The tool call that makes the CLI read the file at absolute `path` with its own read tool (a shell `cat` for Codex, which has none). */
  readTool(path: string): FakeToolCall;
  /**
   * Answers for the calls the CLI makes besides the turn (a title call, a classifier call), or
   * `undefined` for a turn call. Installed as the provider's `respond`.
   */
  sideCall(request: FakeProviderRequest): FakeReply | undefined;
  /** Whether a request is one of the CLI's side calls (not counted as a turn call). */
  isSideCall(request: FakeProviderRequest): boolean;
}

const KEY = "fake-key";
const noSideCalls = { sideCall: () => undefined, isSideCall: () => false };

async function pi(sandbox: CliSandbox, provider: FakeProvider): Promise<Omit<RealCliSetup, "cli" | "sandbox">> {
  const models = {
    providers: {
      fake: {
        baseUrl: provider.openAiUrl,
        api: "openai-completions",
        apiKey: KEY,
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: "fake-model" }],
      },
    },
  };
  await writeFile(join(sandbox.config, "models.json"), JSON.stringify(models));
  // One attempt per model call: the turn's outcome is the provider's answer, not pi's retries.
  await writeFile(join(sandbox.config, "settings.json"), JSON.stringify({ retry: { enabled: false, provider: { maxRetries: 0 } } }));
  const env = { ...sandbox.env, PI_CODING_AGENT_DIR: sandbox.config, PI_OFFLINE: "1", PI_TELEMETRY: "0" };
  return {
    env,
    backend: createPiBackend({ command: cliBinary("pi"), inheritEnv: false, env, provider: "fake", model: "fake-model", extraArgs: ["--no-extensions", "--no-context-files"] }),
    format: "openai-chat",
    shellTool: (command) => ({ name: "bash", arguments: { command } }),
    readTool: (path) => ({ name: "read", arguments: { path } }),
    ...noSideCalls,
  };
}

async function codex(sandbox: CliSandbox, provider: FakeProvider): Promise<Omit<RealCliSetup, "cli" | "sandbox">> {
  const toml = [
    'model = "gpt-5.5"',
    'model_provider = "fake"',
    'approval_policy = "never"',
    'sandbox_mode = "workspace-write"',
    "check_for_update_on_startup = false",
    "",
    "[model_providers.fake]",
    'name = "fake"',
    `base_url = "${provider.openAiUrl}"`,
    'env_key = "FAKE_API_KEY"',
    'wire_api = "responses"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[feedback]",
    "enabled = false",
    "",
  ].join("\n");
  await writeFile(join(sandbox.config, "config.toml"), toml);
  const env = { ...sandbox.env, CODEX_HOME: sandbox.config, FAKE_API_KEY: KEY };
  return {
    env,
    backend: createCodexBackend({ command: cliBinary("codex"), inheritEnv: false, env, skipGitRepoCheck: true, extraArgs: ["--disable", "plugins", "--disable", "apps"] }),
    format: "openai-responses",
    shellTool: (command) => ({ name: "exec_command", arguments: { cmd: command } }),
    readTool: (path) => ({ name: "exec_command", arguments: { cmd: `cat ${path}` } }),
    ...noSideCalls,
  };
}

async function claudeCode(sandbox: CliSandbox, provider: FakeProvider): Promise<Omit<RealCliSetup, "cli" | "sandbox">> {
  const env = {
    ...sandbox.env,
    CLAUDE_CONFIG_DIR: sandbox.config,
    ANTHROPIC_BASE_URL: provider.url,
    ANTHROPIC_API_KEY: KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
  };
  return {
    env,
    backend: createClaudeCodeBackend({ command: cliBinary("claude-code"), inheritEnv: false, env, model: "claude-sonnet-4-5" }),
    format: "anthropic-messages",
    shellTool: (command) => ({ name: "Bash", arguments: { command, description: "run a command" } }),
    readTool: (path) => ({ name: "Read", arguments: { file_path: path } }),
    ...noSideCalls,
  };
}

async function opencode(sandbox: CliSandbox, provider: FakeProvider): Promise<Omit<RealCliSetup, "cli" | "sandbox">> {
  const config = {
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: provider.openAiUrl, apiKey: KEY },
        models: { "fake-model": { tool_call: true, limit: { context: 128000, output: 8192 } } },
      },
    },
    model: "fake/fake-model",
    small_model: "fake/fake-model",
    autoupdate: false,
    share: "disabled",
  };
  const env = {
    ...sandbox.env,
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
  };
  // The first request of a run is a tool-less title call.
  const isSideCall = (request: FakeProviderRequest) => !request.hasTools;
  return {
    env,
    backend: createOpenCodeBackend({ command: cliBinary("opencode"), inheritEnv: false, env, model: "fake/fake-model" }),
    format: "openai-chat",
    shellTool: (command) => ({ name: "bash", arguments: { command, description: "run a command" } }),
    readTool: (path) => ({ name: "read", arguments: { filePath: path } }),
    isSideCall,
    sideCall: (request) => (isSideCall(request) ? { text: "A title", usage: { inputUncached: 7, output: 3 } } : undefined),
  };
}

async function gemini(sandbox: CliSandbox, provider: FakeProvider): Promise<Omit<RealCliSetup, "cli" | "sandbox">> {
  const settings = {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
    security: { auth: { selectedType: "gemini-api-key" } },
  };
  await mkdir(join(sandbox.home, ".gemini"), { recursive: true });
  await writeFile(join(sandbox.home, ".gemini", "settings.json"), JSON.stringify(settings));
  const env = { ...sandbox.env, GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: provider.url, GEMINI_CLI_TRUST_WORKSPACE: "true" };
  return {
    env,
    backend: createGeminiBackend({ command: cliBinary("gemini"), inheritEnv: false, env, model: "gemini-2.5-flash" }),
    format: "gemini",
    shellTool: (command) => ({ name: "run_shell_command", arguments: { command } }),
    readTool: (path) => ({ name: "read_file", arguments: { file_path: path } }),
    ...noSideCalls,
  };
}

async function copilot(sandbox: CliSandbox, provider: FakeProvider): Promise<Omit<RealCliSetup, "cli" | "sandbox">> {
  const env = {
    ...sandbox.env,
    COPILOT_OFFLINE: "true",
    COPILOT_AUTO_UPDATE: "false",
    COPILOT_PROVIDER_BASE_URL: provider.openAiUrl,
    COPILOT_PROVIDER_API_KEY: KEY,
    COPILOT_MODEL: "fake-model",
    COPILOT_HOME: sandbox.config,
  };
  return {
    env,
    backend: createCopilotBackend({ command: cliBinary("copilot"), inheritEnv: false, env, allowAll: true }),
    format: "openai-chat",
    shellTool: (command) => ({ name: "bash", arguments: { command, description: "run a command" } }),
    readTool: (path) => ({ name: "view", arguments: { path } }),
    ...noSideCalls,
  };
}

const SETUPS: Readonly<Record<RealCliId, (sandbox: CliSandbox, provider: FakeProvider) => Promise<Omit<RealCliSetup, "cli" | "sandbox">>>> = {
  pi,
  codex,
  "claude-code": claudeCode,
  opencode,
  gemini,
  copilot,
};

/** A fresh sandbox and adapter for `cli`, pointed at `provider`. */
export async function createRealCliSetup(cli: RealCliId, provider: FakeProvider): Promise<RealCliSetup> {
  const sandbox = await createCliSandbox(cli, provider);
  return { cli, sandbox, ...(await SETUPS[cli](sandbox, provider)) };
}
