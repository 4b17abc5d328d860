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

const FACTORIES: Readonly<Record<string, () => Backend>> = {
  "claude-code": () => createClaudeCodeBackend(),
  codex: () => createCodexBackend(),
  pi: () => createPiBackend(),
  opencode: () => createOpenCodeBackend(),
  copilot: () => createCopilotBackend(),
  cursor: () => createCursorBackend(),
  gemini: () => createGeminiBackend(),
  grok: () => createGrokBackend(),
  qoder: () => createQoderBackend(),
};

/** The CLI backends `keel demo --backend` accepts. */
export const CLI_BACKEND_IDS: readonly string[] = Object.keys(FACTORIES);

/** A real CLI backend with its default options, by id; `invalid_input` for an unknown id. */
export function createCliBackendById(id: string): Result<Backend, KeelError> {
  const factory = FACTORIES[id];
  if (!factory) {
    return err(new KeelError("invalid_input", `unknown backend "${id}": use scripted or one of ${CLI_BACKEND_IDS.join(", ")}`, { details: { id } }));
  }
  return ok(factory());
}
