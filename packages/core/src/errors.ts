import type { JsonValue } from "./json.js";

/**
 * Every stable error code Keel reports. Callers `switch` on these; they never change meaning
 * between releases.
 *
 * - `invalid_input` — the caller passed something that fails validation (see `details.issues`).
 * - `not_found` — the thing asked for does not exist.
 * - `conflict` — a conditional write lost (stale version, existing key, same id with other value).
 * - `deleted` — the target was deleted (a tombstone); a late writer cannot resurrect it.
 * - `lease_held` — another holder owns the lease.
 * - `lease_lost` — the caller's lease was superseded or expired; its fenced write did nothing.
 * - `corrupt` — stored data cannot be read; `details.location` says where.
 * - `too_large` — a value exceeds a size limit; nothing was written.
 * - `unsupported` — the adapter or backend lacks the capability asked for.
 * - `unavailable` — a transient resource problem (busy, locked, not installed); see `retryable`.
 * - `budget_exceeded` — a reservation would pass a budget limit.
 * - `capacity_refused` — a capacity gate (tool calls, active minutes) refused the work.
 * - `no_session` — work that needs an open work session was asked for without one.
 * - `resume_failed` — a provider thread could not be resumed.
 * - `backend_failed` — a backend call failed (exit code, in-band error).
 * - `timeout` — an operation ran past its time limit and was stopped.
 * - `aborted` — the caller aborted the operation.
 * - `limit_exceeded` — a structural limit (entries, depth, count) was passed.
 * - `replay_mismatch` — a replayed journal diverged from the recorded one.
 * - `io_failed` — an unexpected I/O failure (permissions, disk full); the old data is intact.
 */
export const KEEL_ERROR_CODES = [
  "invalid_input",
  "not_found",
  "conflict",
  "deleted",
  "lease_held",
  "lease_lost",
  "corrupt",
  "too_large",
  "unsupported",
  "unavailable",
  "budget_exceeded",
  "capacity_refused",
  "no_session",
  "resume_failed",
  "backend_failed",
  "timeout",
  "aborted",
  "limit_exceeded",
  "replay_mismatch",
  "io_failed",
] as const;

/** A stable Keel error code. See {@link KEEL_ERROR_CODES} for the meaning of each. */
export type KeelErrorCode = (typeof KEEL_ERROR_CODES)[number];

/** Codes that are retryable unless a thrower says otherwise. */
const RETRYABLE_BY_DEFAULT: ReadonlySet<KeelErrorCode> = new Set<KeelErrorCode>([
  "conflict",
  "lease_held",
  "unavailable",
  "timeout",
]);

const MARKER = Symbol.for("keel.error");

/** Options accepted by the {@link KeelError} constructor. */
export interface KeelErrorOptions {
  /** Plain JSON describing the failure (what was asked, what was found, where). */
  details?: Record<string, JsonValue>;
  /** Whether repeating the same call may succeed. Defaults by code. */
  retryable?: boolean;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * The one error type of Keel. Expected failures travel as values (`Result`/`ResultAsync`) that
 * carry a `KeelError`; the `code` is stable, the message says what was wrong and what to do.
 *
 * @example
 * ```ts
 * const result = await store.docs.put(key, value, { expectedVersion: 3 });
 * if (result.isErr() && result.error.code === "conflict") { ... }
 * ```
 */
export class KeelError extends Error {
  /** The stable code callers switch on. */
  readonly code: KeelErrorCode;
  /** Whether repeating the same call may succeed. */
  readonly retryable: boolean;
  /** Plain JSON details; never holds class instances. */
  readonly details: Record<string, JsonValue>;

  constructor(code: KeelErrorCode, message: string, options: KeelErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "KeelError";
    this.code = code;
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT.has(code);
    this.details = options.details ?? {};
    Object.defineProperty(this, MARKER, { value: true });
  }

  /**
   * True for any `KeelError`, also one created by another copy of this package
   * (checked through a `Symbol.for` marker, not `instanceof`).
   * With `code`, also checks the code.
   */
  static is(value: unknown, code?: KeelErrorCode): value is KeelError {
    if (typeof value !== "object" || value === null) return false;
    if ((value as Record<symbol, unknown>)[MARKER] !== true) return false;
    return code === undefined || (value as KeelError).code === code;
  }

  /** A plain JSON form (for logs and events). */
  toJSON(): { name: string; code: KeelErrorCode; message: string; retryable: boolean; details: Record<string, JsonValue> } {
    return { name: this.name, code: this.code, message: this.message, retryable: this.retryable, details: this.details };
  }
}

/** Shorthand for `new KeelError(code, message, options)`. */
export function keelError(code: KeelErrorCode, message: string, options?: KeelErrorOptions): KeelError {
  return new KeelError(code, message, options);
}

/**
 * Turns anything thrown into a `KeelError`: a `KeelError` passes through; anything else becomes
 * `fallback` with the original as `cause`.
 */
export function toKeelError(value: unknown, fallback: KeelErrorCode, message?: string): KeelError {
  if (KeelError.is(value)) return value;
  const text = value instanceof Error ? value.message : String(value);
  return new KeelError(fallback, message ? `${message}: ${text}` : text, { cause: value });
}
