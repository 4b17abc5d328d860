// Each real CLI pointed at the fake provider: the per-CLI facts (env, config files, adapter
// options, wire format, tool calls, side calls) live in @keel/testkit/provider's
// fakeProviderSetup, shared with `keel demo --fake-provider`; this file adds the sandbox and the
// pinned binary.
import { writeFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { Backend } from "@keel/backend";
import { createClaudeCodeBackend } from "@keel/backends/claude-code";
import { createCodexBackend } from "@keel/backends/codex";
import { createCopilotBackend } from "@keel/backends/copilot";
import { createGeminiBackend } from "@keel/backends/gemini";
import { createOpenCodeBackend } from "@keel/backends/opencode";
import { createPiBackend } from "@keel/backends/pi";
import { fakeProviderSetup, type FakeProvider, type FakeProviderAdapterOptions, type FakeProviderFormat, type FakeProviderRequest, type FakeReply, type FakeToolCall } from "@keel/testkit/provider";
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

const FACTORIES: Readonly<Record<RealCliId, (options: { command: string; env: Record<string, string> } & FakeProviderAdapterOptions) => Backend>> = {
  pi: (options) => createPiBackend({ inheritEnv: false, ...options }),
  codex: (options) => createCodexBackend({ inheritEnv: false, ...options }),
  "claude-code": (options) => createClaudeCodeBackend({ inheritEnv: false, ...options }),
  opencode: (options) => createOpenCodeBackend({ inheritEnv: false, ...options }),
  gemini: (options) => createGeminiBackend({ inheritEnv: false, ...options }),
  copilot: (options) => createCopilotBackend({ inheritEnv: false, ...options }),
};

/** What a test adds to the adapter of {@link createRealCliSetup}. */
export interface RealCliSetupOptions {
  /** CLI arguments after the setup's own (e.g. Claude Code's `--mcp-config <file> --strict-mcp-config`). */
  extraArgs?: readonly string[];
  /** Variables added to the CLI's environment. */
  env?: Readonly<Record<string, string>>;
}

/** A fresh sandbox and adapter for `cli`, pointed at `provider`. */
export async function createRealCliSetup(cli: RealCliId, provider: FakeProvider, options: RealCliSetupOptions = {}): Promise<RealCliSetup> {
  const sandbox = await createCliSandbox(cli, provider);
  const setup = fakeProviderSetup(cli, provider, sandbox, { ...sandbox.env, ...options.env });
  for (const [path, text] of Object.entries(setup.files)) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  }
  const extraArgs = [...(setup.adapter.extraArgs ?? []), ...(options.extraArgs ?? [])];
  const backend = FACTORIES[cli]({ command: cliBinary(cli), env: setup.env, ...setup.adapter, ...(extraArgs.length > 0 ? { extraArgs } : {}) });
  return { cli, sandbox, backend, env: setup.env, format: setup.format, shellTool: setup.shellTool, readTool: setup.readTool, sideCall: setup.sideCall, isSideCall: setup.isSideCall };
}
