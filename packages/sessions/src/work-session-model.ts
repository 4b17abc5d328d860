/**
 * How a turn's model compares with the model its work session is pinned to:
 * `match`, `mismatch`, or `unknown` (the turn named no model, so which one ran is not known).
 */
export type ModelPinCheck = "match" | "mismatch" | "unknown";

/**
 * Decides whether a turn ran on its work session's pinned model — pure and total. In order:
 *
 * 1. `match`: the turn named the pinned model, or named none in a session pinned to none (the
 *    backend's default, as pinned);
 * 2. `unknown`: the turn named no model in a session pinned to one. The backend ran its default,
 *    which Keel cannot see: the model is unknown, and an unknown is never reported as a mismatch;
 * 3. `mismatch`: the turn named a model other than the pinned one (also a named model in a
 *    session pinned to the backend's default: the host picked one where the pin said not to).
 *
 * @example
 * ```ts
 * decideModelPin("opus", "opus"); // "match"
 * decideModelPin("opus", null); // "unknown"
 * decideModelPin("opus", "haiku"); // "mismatch"
 * ```
 */
export function decideModelPin(pinned: string | null, model: string | null): ModelPinCheck {
  if (model === pinned) return "match";
  if (model === null) return "unknown";
  return "mismatch";
}
