import { KeelError } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { DEFAULT_SESSION_LIMITS, SESSION_POLICIES, type SessionLimits, type SessionPolicy } from "./session-policy.js";

/** The environment variable that selects the policy (`fresh`, `mission`, `rolling`, `auto`). */
export const POLICY_ENV = "KEEL_ROLE_SESSION_POLICY";
/** The environment variable of {@link SessionLimits.maxTurns}. */
export const MAX_TURNS_ENV = "KEEL_ROLE_SESSION_MAX_TURNS";
/** The environment variable of {@link SessionLimits.maxInputTokens}. */
export const MAX_INPUT_TOKENS_ENV = "KEEL_ROLE_SESSION_MAX_INPUT_TOKENS";

/** What {@link policyFromEnv} read: spread it into `createRoleSessions` options. */
export interface SessionSettings {
  /** From `KEEL_ROLE_SESSION_POLICY` (default `auto`). */
  policy: SessionPolicy;
  /** From `KEEL_ROLE_SESSION_MAX_TURNS` and `KEEL_ROLE_SESSION_MAX_INPUT_TOKENS`. */
  limits: SessionLimits;
}

/** An environment: variable names to values (`process.env` fits). */
export type Environment = Readonly<Record<string, string | undefined>>;

const INTEGER = /^[0-9]+$/;

function parsePositiveInteger(env: Environment, name: string, fallback: number, max: number): Result<number, KeelError> {
  const raw = env[name];
  if (raw === undefined) return ok(fallback);
  const text = raw.trim();
  const value = INTEGER.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    return err(
      new KeelError("invalid_input", `${name}=${JSON.stringify(raw.slice(0, 40))} is not valid: use a whole number from 1 to ${max}, or unset it for ${fallback}`, {
        details: { variable: name, value: raw.slice(0, 200) },
      }),
    );
  }
  return ok(value);
}

/**
 * Reads the role-session settings from an environment:
 * `KEEL_ROLE_SESSION_POLICY` (`fresh`, `mission`, `rolling` or `auto`; default `auto`),
 * `KEEL_ROLE_SESSION_MAX_TURNS` (default 6) and `KEEL_ROLE_SESSION_MAX_INPUT_TOKENS`
 * (default 120,000). Only an unset variable takes its default: any set value that is not valid,
 * the empty string included, is `invalid_input` whose `details.variable` names the variable.
 * Surrounding whitespace is ignored.
 *
 * @example
 * ```ts
 * const settings = policyFromEnv(process.env);
 * if (settings.isErr()) throw settings.error;
 * const sessions = createRoleSessions({ store, ...settings.value });
 * ```
 */
export function policyFromEnv(env: Environment): Result<SessionSettings, KeelError> {
  const rawPolicy = env[POLICY_ENV];
  let policy: SessionPolicy = "auto";
  if (rawPolicy !== undefined) {
    const text = rawPolicy.trim();
    const known = SESSION_POLICIES.find((candidate) => candidate === text);
    if (!known) {
      return err(
        new KeelError(
          "invalid_input",
          `${POLICY_ENV}=${JSON.stringify(rawPolicy.slice(0, 40))} is not a policy: use one of ${SESSION_POLICIES.join(", ")}, or unset it for auto`,
          { details: { variable: POLICY_ENV, value: rawPolicy.slice(0, 200) } },
        ),
      );
    }
    policy = known;
  }
  return parsePositiveInteger(env, MAX_TURNS_ENV, DEFAULT_SESSION_LIMITS.maxTurns, 1_000_000).andThen((maxTurns) =>
    parsePositiveInteger(env, MAX_INPUT_TOKENS_ENV, DEFAULT_SESSION_LIMITS.maxInputTokens, Number.MAX_SAFE_INTEGER).map(
      (maxInputTokens) => ({ policy, limits: { maxTurns, maxInputTokens } }),
    ),
  );
}
