import { z } from "zod";

/**
 * How a role's provider sessions are kept across its turns in a mission.
 *
 * - `fresh`: one provider session per role turn; existing capsules are ignored (not read, not
 *   written). This is the immediate rollback.
 * - `mission`: one provider session per mission and role, kept for the whole mission; it rotates
 *   only when the branch, objective revision, backend or model changes.
 * - `rolling`: like `mission`, and it also rotates after `maxTurns` turns or `maxInputTokens`
 *   observed input tokens since the last rotation.
 * - `auto` (the default): `rolling` on a resumable backend, `fresh` on a fresh-only one.
 */
export type SessionPolicy = "fresh" | "mission" | "rolling" | "auto";

/** A policy after `auto` has been resolved against the backend's capabilities. */
export type EffectivePolicy = Exclude<SessionPolicy, "auto">;

/** Every {@link SessionPolicy}, in documentation order. */
export const SESSION_POLICIES: readonly SessionPolicy[] = ["fresh", "mission", "rolling", "auto"];

/** zod schema of a {@link SessionPolicy}. */
export const SessionPolicySchema: z.ZodType<SessionPolicy> = z.enum(["fresh", "mission", "rolling", "auto"]);

/** The rotation limits of the `rolling` policy. */
export interface SessionLimits {
  /** Rotate when this many turns ran on the current thread (default 6). */
  maxTurns: number;
  /**
   * Rotate when the input tokens observed on the current thread, summed over its turns, reach
   * this many (default 120,000).
   */
  maxInputTokens: number;
}

/** The default limits: 6 turns, 120,000 observed input tokens. */
export const DEFAULT_SESSION_LIMITS: Readonly<SessionLimits> = Object.freeze({ maxTurns: 6, maxInputTokens: 120_000 });

/** zod schema of {@link SessionLimits}: positive integers. */
export const SessionLimitsSchema: z.ZodType<SessionLimits> = z.strictObject({
  maxTurns: z.number().int().positive().max(1_000_000),
  maxInputTokens: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});

/**
 * Resolves `auto`: `rolling` when the backend can resume a provider thread, `fresh` when it is
 * fresh-only. Other policies are returned unchanged.
 */
export function resolvePolicy(policy: SessionPolicy, capabilities: { resume: boolean }): EffectivePolicy {
  if (policy !== "auto") return policy;
  return capabilities.resume ? "rolling" : "fresh";
}
