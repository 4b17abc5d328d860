import { backendError } from "@keel/backend";
import type { KeelError } from "@keel/core";
import { isRecord } from "./message-parts.js";

/** HTTP statuses a provider uses for a failure worth retrying: rate limits, server errors, Anthropic's 529 overloaded. */
function transientStatus(status: number | undefined): boolean {
  return status !== undefined && (status === 408 || status === 429 || status >= 500);
}

function errorName(error: unknown): string {
  return isRecord(error) && typeof error.name === "string" ? error.name : "";
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The backend error of an AI SDK failure. A `RetryError` (the SDK gave up after its own retries)
 * stands for its `lastError`. An `APICallError` is `backend_failed` with its `statusCode`,
 * retryable when the SDK says so or the status is 408, 429 or 5xx (529 included); a missing API
 * key is `unavailable`; anything else (an invalid prompt, an unknown tool) is `backend_failed`,
 * not retryable, with the SDK's message.
 */
export function aiSdkError(error: unknown, backend: string, threadId: string | null): KeelError {
  const cause = errorName(error) === "AI_RetryError" && isRecord(error) && error.lastError !== undefined ? error.lastError : error;
  const name = errorName(cause);
  if (name === "AI_APICallError" && isRecord(cause)) {
    const status = typeof cause.statusCode === "number" ? cause.statusCode : undefined;
    const retryable = cause.isRetryable === true || transientStatus(status);
    const prefix = status === undefined ? "the provider call failed" : `the provider answered ${status}`;
    return backendError("backend_failed", backend, `${prefix}: ${errorText(cause)}`, {
      threadId,
      retryable,
      cause: error,
      extra: { statusCode: status ?? null, aiSdkError: name },
    });
  }
  if (name === "AI_LoadAPIKeyError") {
    return backendError("unavailable", backend, `the model's API key is missing: ${errorText(cause)}`, { threadId, cause: error, extra: { aiSdkError: name } });
  }
  return backendError("backend_failed", backend, `the AI SDK failed: ${errorText(cause)}`, {
    threadId,
    retryable: false,
    cause: error,
    extra: { aiSdkError: name || null },
  });
}
