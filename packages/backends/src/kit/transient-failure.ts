/**
 * What the CLIs and providers write when a failure is transient: an HTTP status of 429 or 5xx
 * next to a word that names it as a status (`status: 503`, `API Error: 529`, `HTTP 500`,
 * `"code":429`), a message that starts with that status (the provider SDKs' `529 <message>`, as
 * pi reports it), or the words of the provider or the CLI (`overloaded`, `rate limit`,
 * `too many requests`, `internal server error`, `bad gateway`, `service unavailable`,
 * `gateway timeout`, `temporarily unavailable`, `try again later`, `high demand` and
 * `temporary errors` — Codex's whole message for a 5xx —, `the server had an error`).
 */
export const TRANSIENT_FAILURE_PATTERNS: readonly RegExp[] = [
  /(?:status|http|error|code|api)[^0-9\n]{0,12}\b(?:429|5\d\d)\b/i,
  /\b(?:429|5\d\d)\s+(?:too many requests|internal server error|bad gateway|service unavailable|gateway time-?out|overloaded)/i,
  /^\s*(?:429|5\d\d)\s/,
  /overloaded|rate[ _-]?limit|too many requests|internal server error|bad gateway|service unavailable|gateway time-?out|temporarily unavailable|try again later|high demand|temporary errors?\b|server had an error/i,
];

/**
 * Whether a CLI's error text says the failure is transient (see
 * {@link TRANSIENT_FAILURE_PATTERNS}): a `backend_failed` with such a message is `retryable`.
 * Pure; matches any of the texts given (in-band error, stderr, stray output).
 *
 * @example
 * ```ts
 * isTransientFailure("API Error: 529 {\"type\":\"overloaded_error\"}"); // true
 * isTransientFailure("API Error: 401 invalid x-api-key"); // false
 * ```
 */
export function isTransientFailure(...texts: readonly string[]): boolean {
  return texts.some((text) => text !== "" && TRANSIENT_FAILURE_PATTERNS.some((pattern) => pattern.test(text)));
}
