import type { KeelError } from "@keel/core";
import type { ResultAsync } from "neverthrow";
import type { BackendCapabilities } from "./backend-capabilities.js";
import type { BackendTurnEvent, BackendTurnListener } from "./backend-events.js";
import type { BackendTurnRequest, BackendTurnResult } from "./backend-turn.js";

/**
 * The Backend port: one coding-agent CLI (or API) that runs one role turn, fresh or resumed.
 * Adapters live in `@keel/backends` (one subpath per CLI) or in third-party packages; the
 * conformance suite `describeBackendConformance` of `@keel/testkit/backend` checks any of them.
 *
 * `runTurn` never throws and never rejects. Its error `code`s are stable (see
 * `BACKEND_ERROR_CODES`):
 *
 * - `invalid_input` — the request failed validation (nothing was started).
 * - `unsupported` — the request names a thread but the backend is fresh-only.
 * - `resume_failed` — the thread to resume is gone (the CLI's own message or exit code); the
 *   host may start fresh and re-seed the context.
 * - `timeout` — the turn ran past `timeoutMs`; the process group was killed.
 * - `aborted` — the caller's `AbortSignal` fired; the process group was killed.
 * - `backend_failed` — a non-zero exit or an in-band error event (an exit code of 0 with an error
 *   event is still a failure); `retryable` is true when the CLI or the provider said the failure
 *   is transient (429, 5xx, 529, overloaded: `isTransientFailure` of `@keel/backends/kit`). The message keeps the
 *   CLI's own words.
 * - `corrupt` — the output is not what the CLI promises (not JSON, no terminal event).
 * - `too_large` — the prompt or an output line exceeds a limit.
 * - `unavailable` — the command is not installed (or an API is unreachable).
 *
 * Progress: `runTurn`'s `onEvent` listener receives {@link BackendTurnEvent}s (text, tool calls,
 * file accesses) while the turn runs.
 *
 * Every error carries `details.backend`, `details.resumeFailed` and, when one was seen,
 * `details.threadId` — an interrupted fresh turn can still be resumed from it.
 *
 * @example
 * ```ts
 * const result = await backend.runTurn({ prompt: "Fix the test", cwd: "/repo", timeoutMs: 600_000 });
 * if (result.isErr() && result.error.code === "resume_failed") {
 *   // start fresh from the capsule
 * }
 * ```
 */
export interface Backend {
  /** Stable backend id, e.g. `claude-code`, `codex`, `scripted` (a `SafeName`). */
  readonly id: string;
  /** What the backend can do. */
  readonly capabilities: BackendCapabilities;
  /**
   * Runs one turn. `signal` aborts it (idempotent: aborting twice, or after the turn ended, does
   * nothing more): a CLI's process group is killed, an in-process loop is stopped, and the turn
   * answers `aborted`.
   *
   * `onEvent`, when given, receives the turn's text, tool calls and file accesses as the backend
   * sees them (see {@link BackendTurnEvent}); a backend that cannot see inside its turn never
   * calls it. It is called synchronously, in stream order, and only before the result settles;
   * adapters call it through `safeTurnListener`, so a throwing listener never breaks the turn,
   * and observing never changes the result.
   */
  runTurn(request: BackendTurnRequest, signal?: AbortSignal, onEvent?: BackendTurnListener): ResultAsync<BackendTurnResult, KeelError>;
}
