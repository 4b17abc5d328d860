import { KeelError, totalInputTokens } from "@keel/core";
import type { Backend } from "@keel/backend";
import type { ExecuteStage } from "@keel/workflow";
import { errAsync, okAsync, ResultAsync } from "neverthrow";
import type { HostCliBackend, HostExecutor } from "../workflow-host-config.js";

type BackendFactory = (options: { command?: string }) => Backend;

// One lazy import per adapter: a host that never runs a stage never loads one.
const FACTORIES: Record<HostCliBackend, () => Promise<BackendFactory>> = {
  "claude-code": async () => (await import("@keel/backends/claude-code")).createClaudeCodeBackend,
  codex: async () => (await import("@keel/backends/codex")).createCodexBackend,
  pi: async () => (await import("@keel/backends/pi")).createPiBackend,
  gemini: async () => (await import("@keel/backends/gemini")).createGeminiBackend,
  opencode: async () => (await import("@keel/backends/opencode")).createOpenCodeBackend,
  copilot: async () => (await import("@keel/backends/copilot")).createCopilotBackend,
};

/** Turns a host config's executor into the engine's `executeStage`. */
export function createHostExecutor(executor: HostExecutor, defaultCwd: string): ExecuteStage {
  if (executor.kind === "scripted") {
    return (call) => {
      const text = executor.replies?.[call.skill] ?? executor.reply;
      if (text === undefined) {
        return errAsync(new KeelError("backend_failed", `the scripted executor has no reply for skill "${call.skill}": add it to executor.replies or set executor.reply`, { details: { skill: call.skill }, retryable: false }));
      }
      return okAsync({ text, tokens: null, durationMs: 0 });
    };
  }
  let backend: Promise<Backend> | undefined;
  const cwd = executor.cwd ?? defaultCwd;
  return (call) =>
    ResultAsync.fromThrowable(
      () => (backend ??= FACTORIES[executor.backend]().then((factory) => factory(executor.command === undefined ? {} : { command: executor.command }))),
      (error) => new KeelError("unavailable", `could not load the ${executor.backend} backend: ${(error as Error).message}`, { cause: error }),
    )().andThen((loaded) =>
      loaded.runTurn({ prompt: call.prompt, cwd, model: call.model.id, timeoutMs: call.timeoutMs }).map((result) => ({
        text: result.text,
        tokens: totalInputTokens(result.usage) === null && result.usage.output === null ? null : (totalInputTokens(result.usage) ?? 0) + (result.usage.output ?? 0),
        durationMs: result.durationMs,
      })),
    );
}
