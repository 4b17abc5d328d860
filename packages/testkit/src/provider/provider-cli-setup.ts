import { join } from "node:path";
import type { FakeProviderRequest } from "./provider-request.js";
import type { FakeProviderFormat, FakeReply, FakeToolCall } from "./provider-script.js";

/** The coding-agent CLIs {@link fakeProviderSetup} can point at a fake provider, by Keel backend id. */
export const FAKE_PROVIDER_CLIS = ["pi", "codex", "claude-code", "opencode", "gemini", "copilot"] as const;

/** A CLI {@link fakeProviderSetup} knows. */
export type FakeProviderCli = (typeof FAKE_PROVIDER_CLIS)[number];

/** The provider's addresses a CLI is pointed at (what {@link FakeProvider} offers). */
export interface FakeProviderAddress {
  /** Anthropic / Gemini base URL. */
  url: string;
  /** OpenAI-style base URL (`…/v1`). */
  openAiUrl: string;
}

/** The directories one CLI run owns (all absolute, made by the caller). */
export interface FakeProviderCliDirs {
  /** `HOME` of the CLI. */
  home: string;
  /** The CLI's own config directory (`CODEX_HOME`, `PI_CODING_AGENT_DIR`, `CLAUDE_CONFIG_DIR`, `COPILOT_HOME`). */
  config: string;
}

/**
 * The options the CLI's Keel adapter needs besides `env` (passed to its `create…Backend`, with
 * `inheritEnv: false` and the setup's `env`).
 */
export interface FakeProviderAdapterOptions {
  /** pi's `--provider` (the custom provider of its `models.json`). */
  provider?: string;
  /** The model the CLI asks the provider for. */
  model?: string;
  /** Extra CLI arguments (pi: no extensions or context files; Codex: plugins and apps off). */
  extraArgs?: string[];
  /** Codex: run outside a git repository. */
  skipGitRepoCheck?: boolean;
  /** Copilot: allow every tool without asking. */
  allowAll?: boolean;
}

/** How one CLI is pointed at the fake provider: plain data, written and used by the caller. */
export interface FakeProviderCliSetup {
  /** The CLI this setup is for. */
  cli: FakeProviderCli;
  /** The CLI's whole environment: `baseEnv` plus the CLI's own variables. */
  env: Record<string, string>;
  /** Config files to write before the CLI starts, by absolute path. */
  files: Record<string, string>;
  /** The adapter's options. */
  adapter: FakeProviderAdapterOptions;
  /** The wire format the CLI speaks to the provider. */
  format: FakeProviderFormat;
  /** The tool call that makes the CLI run `command` in its shell, in its cwd. */
  shellTool(command: string): FakeToolCall;
  /** The tool call that makes the CLI read the file at absolute `path` with its own read tool (a shell `cat` for Codex, which has none). */
  readTool(path: string): FakeToolCall;
  /** The answer to a call the CLI makes besides the turn (OpenCode's title call), or `undefined` for a turn call. */
  sideCall(request: FakeProviderRequest): FakeReply | undefined;
  /** Whether a request is one of the CLI's side calls (not a turn call). */
  isSideCall(request: FakeProviderRequest): boolean;
}

const KEY = "fake-key";
type Part = Omit<FakeProviderCliSetup, "cli" | "env"> & { env: Record<string, string> };
const noSideCalls = { sideCall: () => undefined, isSideCall: () => false };

function pi(provider: FakeProviderAddress, dirs: FakeProviderCliDirs): Part {
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
  return {
    // One attempt per model call: the turn's outcome is the provider's answer, not pi's retries.
    files: {
      [join(dirs.config, "models.json")]: JSON.stringify(models),
      [join(dirs.config, "settings.json")]: JSON.stringify({ retry: { enabled: false, provider: { maxRetries: 0 } } }),
    },
    env: { PI_CODING_AGENT_DIR: dirs.config, PI_OFFLINE: "1", PI_TELEMETRY: "0" },
    adapter: { provider: "fake", model: "fake-model", extraArgs: ["--no-extensions", "--no-context-files"] },
    format: "openai-chat",
    shellTool: (command) => ({ name: "bash", arguments: { command } }),
    readTool: (path) => ({ name: "read", arguments: { path } }),
    ...noSideCalls,
  };
}

function codex(provider: FakeProviderAddress, dirs: FakeProviderCliDirs): Part {
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
  return {
    files: { [join(dirs.config, "config.toml")]: toml },
    env: { CODEX_HOME: dirs.config, FAKE_API_KEY: KEY },
    adapter: { skipGitRepoCheck: true, extraArgs: ["--disable", "plugins", "--disable", "apps"] },
    format: "openai-responses",
    shellTool: (command) => ({ name: "exec_command", arguments: { cmd: command } }),
    readTool: (path) => ({ name: "exec_command", arguments: { cmd: `cat ${path}` } }),
    ...noSideCalls,
  };
}

function claudeCode(provider: FakeProviderAddress, dirs: FakeProviderCliDirs): Part {
  return {
    files: {},
    env: {
      CLAUDE_CONFIG_DIR: dirs.config,
      ANTHROPIC_BASE_URL: provider.url,
      ANTHROPIC_API_KEY: KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_MAX_RETRIES: "0",
    },
    adapter: { model: "claude-sonnet-4-5" },
    format: "anthropic-messages",
    shellTool: (command) => ({ name: "Bash", arguments: { command, description: "run a command" } }),
    readTool: (path) => ({ name: "Read", arguments: { file_path: path } }),
    ...noSideCalls,
  };
}

function opencode(provider: FakeProviderAddress): Part {
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
  // The first request of a run is a tool-less title call.
  const isSideCall = (request: FakeProviderRequest) => !request.hasTools;
  return {
    files: {},
    env: {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      OPENCODE_DISABLE_SHARE: "1",
      OPENCODE_DISABLE_CLAUDE_CODE: "1",
    },
    adapter: { model: "fake/fake-model" },
    format: "openai-chat",
    shellTool: (command) => ({ name: "bash", arguments: { command, description: "run a command" } }),
    readTool: (path) => ({ name: "read", arguments: { filePath: path } }),
    isSideCall,
    sideCall: (request) => (isSideCall(request) ? { text: "A title", usage: { inputUncached: 7, output: 3 } } : undefined),
  };
}

function gemini(provider: FakeProviderAddress, dirs: FakeProviderCliDirs): Part {
  const settings = {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
    security: { auth: { selectedType: "gemini-api-key" } },
  };
  return {
    files: { [join(dirs.home, ".gemini", "settings.json")]: JSON.stringify(settings) },
    env: { GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: provider.url, GEMINI_CLI_TRUST_WORKSPACE: "true" },
    adapter: { model: "gemini-2.5-flash" },
    format: "gemini",
    shellTool: (command) => ({ name: "run_shell_command", arguments: { command } }),
    readTool: (path) => ({ name: "read_file", arguments: { file_path: path } }),
    ...noSideCalls,
  };
}

function copilot(provider: FakeProviderAddress, dirs: FakeProviderCliDirs): Part {
  return {
    files: {},
    env: {
      COPILOT_OFFLINE: "true",
      COPILOT_AUTO_UPDATE: "false",
      COPILOT_PROVIDER_BASE_URL: provider.openAiUrl,
      COPILOT_PROVIDER_API_KEY: KEY,
      COPILOT_MODEL: "fake-model",
      COPILOT_HOME: dirs.config,
    },
    adapter: { allowAll: true },
    format: "openai-chat",
    shellTool: (command) => ({ name: "bash", arguments: { command, description: "run a command" } }),
    readTool: (path) => ({ name: "view", arguments: { path } }),
    ...noSideCalls,
  };
}

const SETUPS: Readonly<Record<FakeProviderCli, (provider: FakeProviderAddress, dirs: FakeProviderCliDirs) => Part>> = {
  pi,
  codex,
  "claude-code": claudeCode,
  opencode,
  gemini,
  copilot,
};

/**
 * How the real coding-agent CLI `cli` is pointed at a fake provider (see
 * `shared/research/real-clis.md`): its environment on top of `baseEnv` (which should hold its
 * `HOME`, `TMPDIR`, `PATH` and the provider's `proxyEnv()`), the config files to write, the
 * options its Keel adapter needs, its wire format and the tool calls that make it run a shell
 * command or read a file. Pure: the caller writes `files` and builds the adapter. Retries inside
 * the CLI are off where it allows, so a scripted error is the turn's outcome.
 *
 * @example
 * ```ts
 * const setup = fakeProviderSetup("pi", provider, { home, config }, { PATH: process.env.PATH!, HOME: home, ...provider.proxyEnv() });
 * for (const [path, text] of Object.entries(setup.files)) await writeFile(path, text);
 * const backend = createPiBackend({ inheritEnv: false, env: setup.env, ...setup.adapter });
 * ```
 */
export function fakeProviderSetup(
  cli: FakeProviderCli,
  provider: FakeProviderAddress,
  dirs: FakeProviderCliDirs,
  baseEnv: Readonly<Record<string, string>>,
): FakeProviderCliSetup {
  const setup = SETUPS[cli];
  if (!setup) throw new TypeError(`fakeProviderSetup: unknown CLI "${String(cli)}"; use one of ${FAKE_PROVIDER_CLIS.join(", ")}`);
  const part = setup(provider, dirs);
  return { cli, ...part, env: { ...baseEnv, ...part.env } };
}
