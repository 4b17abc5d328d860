/**
 * A custom backend: any async function that answers a prompt (a host's own model client, an
 * HTTP call, a local model) behind Keel's `Backend` port, with threads kept in memory so that
 * turns can be resumed. `function-backend.test.ts` validates it with the testkit's backend
 * conformance suite.
 */
import { KeelError, emptyUsage, estimateTokens, newId, type Usage } from "@keel/core";
import { backendError, validateBackendTurnRequest, withBackendContext, type Backend, type BackendTurnResult } from "@keel/backend";
import { ResultAsync, errAsync } from "neverthrow";

/** One earlier exchange of a thread. */
export interface Exchange {
  prompt: string;
  text: string;
}

/** What the model function answers: text, or an in-band error the provider reported. */
export type ModelAnswer = { text: string; usage?: Partial<Usage> } | { error: string };

/** Options of {@link createFunctionBackend}. */
export interface FunctionBackendOptions {
  /** The backend id (a safe name). */
  id: string;
  /** The model call: the new prompt and the thread's earlier exchanges (empty on a fresh turn). */
  model: (prompt: string, history: readonly Exchange[], signal: AbortSignal) => Promise<unknown>;
}

/** Creates a resumable backend over a model function. */
export function createFunctionBackend(options: FunctionBackendOptions): Backend {
  const threads = new Map<string, Exchange[]>();
  // backendError gives every failure the details the port promises (backend, threadId, resumeFailed).
  const fail = (code: KeelError["code"], message: string, threadId: string | null) =>
    backendError(code, options.id, `${options.id}: ${message}`, { threadId });

  return {
    id: options.id,
    capabilities: { resume: true, skills: "prompt", usage: "partial" },
    runTurn(request, signal) {
      const checked = validateBackendTurnRequest(request);
      if (checked.isErr()) return errAsync(withBackendContext(checked.error, options.id, null));
      if (signal?.aborted) return errAsync(fail("aborted", "aborted before the turn started", request.threadId ?? null));
      const threadId = request.threadId ?? newId();
      const history = request.threadId === undefined ? [] : threads.get(request.threadId);
      if (!history) return errAsync(fail("resume_failed", `thread ${threadId} is gone`, threadId));
      if (!threads.has(threadId)) threads.set(threadId, history);
      const started = Date.now();
      const controller = new AbortController();
      const onAbort = () => controller.abort();
      signal?.addEventListener("abort", onAbort, { once: true });

      const run = async (): Promise<BackendTurnResult> => {
        let timer: NodeJS.Timeout | undefined;
        const stopped = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(fail("timeout", `no answer within ${request.timeoutMs} ms`, threadId)), request.timeoutMs);
          controller.signal.addEventListener("abort", () => reject(fail("aborted", "the caller aborted the turn", threadId)), { once: true });
        });
        try {
          const answer = (await Promise.race([options.model(request.prompt, [...history], controller.signal), stopped])) as ModelAnswer;
          if (typeof answer !== "object" || answer === null) throw fail("corrupt", "the model function returned no answer object", threadId);
          if ("error" in answer) throw fail("backend_failed", answer.error, threadId);
          if (typeof answer.text !== "string") throw fail("corrupt", "the answer has no text", threadId);
          const input = [...history.flatMap((exchange) => [exchange.prompt, exchange.text]), request.prompt].join("\n");
          history.push({ prompt: request.prompt, text: answer.text });
          const usage: Usage = { ...emptyUsage(), inputUncached: estimateTokens(input), output: estimateTokens(answer.text), ...answer.usage };
          return { text: answer.text, threadId, usage, durationMs: Date.now() - started, exitCode: null, fileAccess: [], toolCalls: 0 };
        } finally {
          clearTimeout(timer);
          controller.abort();
          signal?.removeEventListener("abort", onAbort);
        }
      };
      return ResultAsync.fromPromise(run(), (error) => (KeelError.is(error) ? error : fail("backend_failed", String(error), threadId)));
    },
  };
}
