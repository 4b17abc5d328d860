import { KeelError, type JsonValue, type KeelErrorCode } from "@keel/core";

/**
 * The error codes a `Backend`'s `runTurn` answers with, in the order an adapter decides
 * them (see the `Backend` port for what each means). Hosts `switch` on these.
 */
export const BACKEND_ERROR_CODES = [
  "invalid_input",
  "unsupported",
  "aborted",
  "too_large",
  "unavailable",
  "io_failed",
  "resume_failed",
  "timeout",
  "backend_failed",
  "corrupt",
] as const satisfies readonly KeelErrorCode[];

/** A code of {@link BACKEND_ERROR_CODES}. */
export type BackendErrorCode = (typeof BACKEND_ERROR_CODES)[number];

/** What a backend error says beyond its code (all optional, all plain JSON in `details`). */
export interface BackendErrorContext {
  /** The thread the turn ran in, when one was seen (a fresh turn interrupted after its id can be resumed). */
  threadId?: string | null;
  /** Exit code of the process, when it exited. */
  exitCode?: number | null;
  /** Signal that ended the process, when one did. */
  signal?: string | null;
  /** The process's stderr (only its tail is kept in `details`). */
  stderr?: string;
  /** Whether repeating the call may succeed (defaults by code: see `KeelError`). */
  retryable?: boolean;
  /** The underlying error. */
  cause?: unknown;
  /** Extra plain JSON details. */
  extra?: Record<string, JsonValue>;
}

/** How much of stderr an error keeps in its details. */
export const ERROR_STDERR_TAIL_CHARS = 2000;

/** The last {@link ERROR_STDERR_TAIL_CHARS} characters of `text`, trimmed. */
export function stderrTail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length <= ERROR_STDERR_TAIL_CHARS ? trimmed : `…${trimmed.slice(-ERROR_STDERR_TAIL_CHARS)}`;
}

/**
 * Builds the `KeelError` of a failed turn with the details every backend error carries:
 * `backend`, `threadId` (or `null`), `resumeFailed`, and when known `exitCode`, `signal` and the
 * tail of `stderr`.
 *
 * @example
 * ```ts
 * backendError("backend_failed", "codex", "codex reported an error: 503 Service Unavailable", { retryable: true });
 * ```
 */
export function backendError(code: KeelErrorCode, backend: string, message: string, context: BackendErrorContext = {}): KeelError {
  const details: Record<string, JsonValue> = {
    backend,
    threadId: context.threadId ?? null,
    resumeFailed: code === "resume_failed",
    ...context.extra,
  };
  if (context.exitCode !== undefined) details.exitCode = context.exitCode;
  if (context.signal !== undefined) details.signal = context.signal;
  if (context.stderr !== undefined && context.stderr.trim() !== "") details.stderr = stderrTail(context.stderr);
  return new KeelError(code, message, {
    details,
    ...(context.retryable === undefined ? {} : { retryable: context.retryable }),
    ...(context.cause === undefined ? {} : { cause: context.cause }),
  });
}

/**
 * Adds backend context to an error raised below the adapter (e.g. by the process runner): the
 * code, message and `retryable` stay, `details` gain `backend`, `threadId` and `resumeFailed`.
 */
export function withBackendContext(error: KeelError, backend: string, threadId: string | null): KeelError {
  return new KeelError(error.code, error.message, {
    details: { ...error.details, backend, threadId, resumeFailed: error.code === "resume_failed" },
    retryable: error.retryable,
    cause: error.cause ?? error,
  });
}
