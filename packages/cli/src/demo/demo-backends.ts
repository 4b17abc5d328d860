import { KeelError } from "@keel/core";
import type { Backend } from "@keel/backend";
import { createClaudeCodeBackend } from "@keel/backends/claude-code";
import { createCodexBackend } from "@keel/backends/codex";
import { createCopilotBackend } from "@keel/backends/copilot";
import { createCursorBackend } from "@keel/backends/cursor";
import { createGeminiBackend } from "@keel/backends/gemini";
import { createGrokBackend } from "@keel/backends/grok";
import { createOpenCodeBackend } from "@keel/backends/opencode";
import { createPiBackend } from "@keel/backends/pi";
import { createQoderBackend } from "@keel/backends/qoder";
import { err, ok, type Result } from "neverthrow";

/**
 * What the demo passes to an adapter: its environment and whether it inherits this process's
 * (the fake provider gives each CLI a sandboxed one), and the settings a fake-provider setup adds
 * (`FakeProviderAdapterOptions` of `@keel/testkit/provider`). Each adapter reads the fields it knows.
 */
export interface DemoAdapterOptions {
  env?: Record<string, string>;
  inheritEnv?: boolean;
  provider?: string;
  model?: string;
  extraArgs?: string[];
  skipGitRepoCheck?: boolean;
  allowAll?: boolean;
}

const FACTORIES: Readonly<Record<string, (options: DemoAdapterOptions) => Backend>> = {
  "claude-code": (options) => createClaudeCodeBackend(options),
  codex: (options) => createCodexBackend(options),
  pi: (options) => createPiBackend(options),
  opencode: (options) => createOpenCodeBackend(options),
  copilot: (options) => createCopilotBackend(options),
  cursor: (options) => createCursorBackend(options),
  gemini: (options) => createGeminiBackend(options),
  grok: (options) => createGrokBackend(options),
  qoder: (options) => createQoderBackend(options),
};

/** The CLI backends `keel demo --backend` accepts. */
export const CLI_BACKEND_IDS: readonly string[] = Object.keys(FACTORIES);

/** A real CLI backend by id, with `options` (default: the adapter's own defaults); `invalid_input` for an unknown id. */
export function createCliBackendById(id: string, options: DemoAdapterOptions = {}): Result<Backend, KeelError> {
  const factory = FACTORIES[id];
  if (!factory) {
    return err(new KeelError("invalid_input", `unknown backend "${id}": use scripted or one of ${CLI_BACKEND_IDS.join(", ")}`, { details: { id } }));
  }
  return ok(factory(options));
}
