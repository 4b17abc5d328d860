import { KeelError, totalInputTokens } from "@keel/core";
import type { Backend } from "@keel/backend";
import { loadBuiltInAdapter } from "@keel/backends";
import type { ExecuteStage } from "@keel/workflow";
import { errAsync, okAsync, ResultAsync } from "neverthrow";
import type { HostExecutor } from "../workflow-host-config.js";

// The adapter is loaded at the first stage it runs: a host that never runs one loads none.
async function createBackend(id: string, command: string | undefined): Promise<Backend> {
  const adapter = await loadBuiltInAdapter(id);
  if (adapter.isErr()) throw adapter.error;
  return adapter.value.create(command === undefined ? {} : { command });
}

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
      () => (backend ??= createBackend(executor.backend, executor.command)),
      (error) => new KeelError("unavailable", `could not load the ${executor.backend} backend: ${(error as Error).message}`, { cause: error }),
    )().andThen((loaded) =>
      loaded.runTurn({ prompt: call.prompt, cwd, model: call.model.id, timeoutMs: call.timeoutMs }).map((result) => ({
        text: result.text,
        tokens: totalInputTokens(result.usage) === null && result.usage.output === null ? null : (totalInputTokens(result.usage) ?? 0) + (result.usage.output ?? 0),
        durationMs: result.durationMs,
      })),
    );
}
