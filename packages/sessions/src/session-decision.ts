import type { Capsule, ObjectiveRevision } from "./capsule-schema.js";
import { resolvePolicy, type EffectivePolicy, type SessionLimits, type SessionPolicy } from "./session-policy.js";

/** The session action of a turn: a new provider session, the same one, or a new one replacing it. */
export type SessionActionKind = "fresh" | "resumed" | "rotated";

/** Why a rotation happened. Every `rotated` decision names one of these. */
export type RotationReason = "max_turns" | "max_input_tokens" | "branch_changed" | "objective_revised" | "backend_changed" | "model_changed";

/**
 * Why an action was chosen.
 * - `policy_fresh`: the policy is `fresh` (or `auto` on a fresh-only backend).
 * - `fresh_only_backend`: the backend cannot resume, so every turn is fresh (seeded from the capsule).
 * - `first_turn`: there is no thread to resume yet (no capsule, or its thread was dropped).
 * - `continuing`: the thread is resumed; nothing calls for a rotation.
 * - a {@link RotationReason}: the thread is rotated.
 * - `resume_failed`: resuming failed and the turn was retried fresh from the capsule (set by
 *   `runTurn`, never by {@link decideSessionAction}).
 */
export type SessionReason = "policy_fresh" | "fresh_only_backend" | "first_turn" | "continuing" | RotationReason | "resume_failed";

/** Every {@link RotationReason}. */
export const ROTATION_REASONS: readonly RotationReason[] = [
  "max_turns",
  "max_input_tokens",
  "branch_changed",
  "objective_revised",
  "backend_changed",
  "model_changed",
];

/** Every {@link SessionReason}. */
export const SESSION_REASONS: readonly SessionReason[] = ["policy_fresh", "fresh_only_backend", "first_turn", "continuing", ...ROTATION_REASONS, "resume_failed"];

/** What a turn asks for, as far as the session decision is concerned. */
export interface TurnConditions {
  /** The backend that runs the turn. */
  backend: {
    /** The backend id (a safe name), e.g. `codex`. */
    id: string;
    /** Whether it can resume a provider thread; `false` means fresh-only. */
    resumable: boolean;
  };
  /** The model, or `null` when the backend chooses. */
  model: string | null;
  /** The repository branch, or `null` when none. */
  branch: string | null;
  /** The objective revision the turn works on. */
  objectiveRevision: ObjectiveRevision;
}

/** The input of {@link decideSessionAction}: plain data. */
export interface SessionDecisionInput {
  /** The configured policy (`auto` is resolved here). */
  policy: SessionPolicy;
  /** The rotation limits of `rolling`. */
  limits: SessionLimits;
  /** The role's capsule, or `null` when there is none (or the policy is `fresh`). */
  capsule: Capsule | null;
  /** What the turn asks for. */
  request: TurnConditions;
  /** The backend's capabilities. */
  capabilities: {
    /** Whether the backend can resume a thread; `false` means fresh-only. */
    resume: boolean;
  };
}

/** The output of {@link decideSessionAction}. */
export interface SessionDecision {
  /** A new provider session, the same one, or a new one replacing it. */
  action: SessionActionKind;
  /** Why; every `rotated` action names a {@link RotationReason}. */
  reason: SessionReason;
  /** The policy after `auto` was resolved. */
  policy: EffectivePolicy;
  /** The thread to resume: set exactly when `action` is `resumed`. */
  threadId: string | null;
}

/** The first binding change between a capsule's thread and a request, in a fixed order. */
function bindingChange(capsule: Capsule, request: TurnConditions): RotationReason | undefined {
  if (capsule.thread.backend !== request.backend.id) return "backend_changed";
  if (capsule.thread.model !== request.model) return "model_changed";
  if (capsule.thread.branch !== request.branch) return "branch_changed";
  if (capsule.objectiveRevision !== request.objectiveRevision) return "objective_revised";
  return undefined;
}

/**
 * Decides how a role turn uses provider sessions. Pure and total: the same input always gives
 * the same decision, and every input gives one.
 *
 * In order: the `fresh` policy (or `auto` on a fresh-only backend) is always `fresh`
 * (`policy_fresh`); a fresh-only backend is always `fresh` (`fresh_only_backend`); with no
 * capsule the turn is `fresh` (`first_turn`); a changed backend, model, branch or objective
 * revision is `rotated` under `mission` and `rolling`; a capsule without a thread is `fresh`
 * (`first_turn`); under `rolling`, `turnsSinceRotation >= maxTurns` rotates (`max_turns`) and
 * `observedInputTokens >= maxInputTokens` rotates (`max_input_tokens`); otherwise the thread is
 * `resumed` (`continuing`).
 *
 * @example
 * ```ts
 * decideSessionAction({ policy: "rolling", limits: DEFAULT_SESSION_LIMITS, capsule: null,
 *   request: { backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 },
 *   capabilities: { resume: true } });
 * // → { action: "fresh", reason: "first_turn", policy: "rolling", threadId: null }
 * ```
 */
export function decideSessionAction(input: SessionDecisionInput): SessionDecision {
  const resumable = input.capabilities.resume && input.request.backend.resumable;
  const policy = resolvePolicy(input.policy, { resume: resumable });
  const fresh = (reason: SessionReason): SessionDecision => ({ action: "fresh", reason, policy, threadId: null });
  if (policy === "fresh") return fresh("policy_fresh");
  if (!resumable) return fresh("fresh_only_backend");
  const capsule = input.capsule;
  if (!capsule) return fresh("first_turn");
  const changed = bindingChange(capsule, input.request);
  if (changed) return { action: "rotated", reason: changed, policy, threadId: null };
  const threadId = capsule.thread.threadId;
  if (threadId === null) return fresh("first_turn");
  if (policy === "rolling") {
    if (capsule.counters.turnsSinceRotation >= input.limits.maxTurns) return { action: "rotated", reason: "max_turns", policy, threadId: null };
    if (capsule.counters.observedInputTokens >= input.limits.maxInputTokens) {
      return { action: "rotated", reason: "max_input_tokens", policy, threadId: null };
    }
  }
  return { action: "resumed", reason: "continuing", policy, threadId };
}
