import { KeelError, emptyUsage, estimateTokens, newId, type Usage } from "@keel/core";
import type { Backend, BackendTurnRequest, BackendTurnResult } from "@keel/backend";
import { ResultAsync, errAsync, okAsync } from "neverthrow";

/** A small provider double for the runtime's unit tests: threads remember their prompts. */
export interface FakeBackend extends Backend {
  requests: BackendTurnRequest[];
  /** Forget every thread (as a provider that lost its sessions). */
  forgetThreads(): void;
}

export function createFakeBackend(options: {
  id?: string;
  resumable?: boolean;
  skills?: "native" | "staged" | "prompt";
  instructions?: "native" | "prompt";
  answer?: (request: BackendTurnRequest) => string;
  fail?: (request: BackendTurnRequest) => KeelError | undefined;
} = {}): FakeBackend {
  const threads = new Map<string, number>();
  const requests: BackendTurnRequest[] = [];
  return {
    id: options.id ?? "fake",
    capabilities: {
      resume: options.resumable ?? true,
      skills: options.skills ?? "prompt",
      usage: "full",
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
    requests,
    forgetThreads: () => threads.clear(),
    runTurn(request): ResultAsync<BackendTurnResult, KeelError> {
      requests.push(request);
      const failure = options.fail?.(request);
      if (failure) return errAsync(failure);
      let threadId = request.threadId ?? null;
      if (threadId !== null && !threads.has(threadId)) {
        return errAsync(new KeelError("resume_failed", `no thread ${threadId}`));
      }
      if (threadId === null) threadId = newId();
      const text = options.answer?.(request) ?? `done: ${request.prompt.slice(-20)}`;
      const history = (threads.get(threadId) ?? 0) + estimateTokens(request.prompt);
      threads.set(threadId, history + estimateTokens(text));
      const usage: Usage = { inputUncached: history, cacheRead: 0, cacheWrite: 0, output: estimateTokens(text), reasoning: null, costUsd: null };
      return okAsync({ text, threadId: options.resumable === false ? null : threadId, usage, durationMs: 5, exitCode: 0, fileAccess: [], toolCalls: 0 });
    },
  };
}

/**
 * A resumable backend that accepts any thread (as one provider shared by several hosts would),
 * whose turn first runs `during` (what happens elsewhere while it works), then answers
 * `Decision: <the prompt's last line>`.
 */
export function createPausingBackend(during: (request: BackendTurnRequest) => Promise<void> = async () => undefined): Backend & { requests: BackendTurnRequest[] } {
  const requests: BackendTurnRequest[] = [];
  return {
    id: "fake",
    capabilities: { resume: true, skills: "prompt", usage: "full" },
    requests,
    runTurn: (request) =>
      ResultAsync.fromSafePromise(
        (async (): Promise<BackendTurnResult> => {
          requests.push(request);
          await during(request);
          const threadId = request.threadId ?? newId();
          return { text: `Decision: ${request.prompt.split("\n").at(-1)}`, threadId, usage: emptyUsage(), durationMs: 1, exitCode: 0, fileAccess: [], toolCalls: 0 };
        })(),
      ),
  };
}
