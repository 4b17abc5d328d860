import { UsageSchema, isSafeName, utf8Bytes, type KeelError, type KeelErrorCode, type Usage } from "@keel/core";
import type { Result, ResultAsync } from "neverthrow";
import { z } from "zod";
import { CAPSULE_LIMITS, ObjectiveRevisionSchema, type Capsule, type ObjectiveRevision } from "./capsule-schema.js";
import type { SessionActionKind, SessionReason } from "./session-decision.js";
import type { EffectivePolicy } from "./session-policy.js";

/**
 * What a host asks of role sessions for one turn of a role (the role-session layer: the runtime's
 * `RoleTurnInput` is the layer above, `@keel/backend`'s `BackendTurnRequest` the one below). A
 * role's handle (`RoleSessionHandle.runTurn`) is asked the same without `missionId` and `role`,
 * which it fixes.
 */
export interface RoleSessionTurnRequest {
  /** The mission (a safe name). */
  missionId: string;
  /** The role (a safe name). */
  role: string;
  /** The backend that will run the turn. */
  backend: {
    /** The backend id (a safe name), e.g. `codex`. */
    id: string;
    /** Whether it can resume a provider thread (`false`: fresh-only). */
    resumable: boolean;
  };
  /** The model, or `null`/absent when the backend chooses. */
  model?: string | null | undefined;
  /** The repository branch, or `null`/absent when none. */
  branch?: string | null | undefined;
  /** The objective revision the turn works on. */
  objectiveRevision: ObjectiveRevision;
}

/** @deprecated use {@link RoleSessionTurnRequest}. */
export type TurnRequest = RoleSessionTurnRequest;

const bindingText = z.string().min(1).refine((value) => utf8Bytes(value) <= CAPSULE_LIMITS.maxBindingBytes, {
  message: `must be at most ${CAPSULE_LIMITS.maxBindingBytes} bytes`,
});

const safeName = z.string().refine(isSafeName, {
  message: "not a safe name: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit",
});

/** zod schema of a {@link RoleSessionTurnRequest} (strict). */
export const RoleSessionTurnRequestSchema = z.strictObject({
  missionId: safeName,
  role: safeName,
  backend: z.strictObject({ id: safeName, resumable: z.boolean() }),
  model: bindingText.nullable().optional(),
  branch: bindingText.nullable().optional(),
  objectiveRevision: ObjectiveRevisionSchema,
});

/** zod schema of a role handle's request: a {@link RoleSessionTurnRequest} naming no mission or role (strict). */
export const HandleTurnRequestSchema = RoleSessionTurnRequestSchema.omit({ missionId: true, role: true });

/** Options of one role-session turn. */
export interface RoleSessionTurnOptions {
  /** Ends the wait for the role's lease: the turn answers `aborted` and `execute` is not called. */
  signal?: AbortSignal;
}

/** zod schema of {@link RoleSessionTurnOptions} (strict; the options may be left out). */
export const RoleSessionTurnOptionsSchema = z
  .strictObject({ signal: z.instanceof(AbortSignal, { message: "signal must be an AbortSignal" }).optional() })
  .optional();

/**
 * What `runTurn` hands to the host's {@link Execute}: how to run the turn. Resume `threadId` when
 * the action is `resumed`; otherwise start a new provider session, seeded from `capsule` when
 * there is one.
 */
export interface TurnPlan {
  /** The mission. */
  missionId: string;
  /** The role. */
  role: string;
  /** The effective policy (`auto` resolved). */
  policy: EffectivePolicy;
  /** `resumed`: continue `threadId`; `fresh` or `rotated`: start a new provider session. */
  action: SessionActionKind;
  /** Why (see {@link SessionReason}); `resume_failed` on the retry after a failed resume. */
  reason: SessionReason;
  /** The provider thread to resume, or `null` to start a new one. */
  threadId: string | null;
  /** The role's capsule to seed a new session with; `null` when resuming, under `fresh`, or when there is none. */
  capsule: Capsule | null;
  /** The capsule's store key as a path (`missions/<mission>/role-sessions/<role>`). */
  capsulePath: string;
  /**
   * The role's turn number in the mission this turn will have (1-based, over all its sessions),
   * from the capsule; under the `fresh` policy, which keeps no capsule, counted in this process.
   */
  turn: number;
}

/** What the host's {@link Execute} reports about a successful turn. */
export interface TurnOutcome {
  /** The model's final text. Never stored by Keel. */
  text: string;
  /** The provider thread the turn ran on, or `null` when the backend has none. */
  threadId: string | null;
  /** The normalized usage, or `null` when the backend reported none. */
  usage: Usage | null;
  /** Bytes of the prompt sent (for a resumed turn, only the new part). */
  promptBytes: number;
  /** The role's decisive output of this turn, if any (kept in the capsule). */
  decisiveOutput?: string;
  /** Paths the role referenced and inspected in this turn (added to the capsule). */
  paths?: {
    /** Paths the role referenced (named, cited). */
    referenced?: string[];
    /** Paths the role inspected (opened, read). */
    inspected?: string[];
  };
  /** The role's open checkpoint items after this turn (replace the previous ones). */
  openCheckpointItems?: string[];
  /** A new repository map, if the role produced one (replaces the previous one). */
  repositoryMap?: string;
}

/**
 * zod schema of a {@link TurnOutcome}. Unknown fields are dropped (never stored); content of any
 * size is accepted and bounded later when the capsule is written.
 */
export const TurnOutcomeSchema = z.object({
  text: z.string(),
  threadId: bindingText.nullable(),
  usage: UsageSchema.nullable(),
  promptBytes: z.number().int().nonnegative(),
  decisiveOutput: z.string().optional(),
  paths: z.object({ referenced: z.array(z.string()).optional(), inspected: z.array(z.string()).optional() }).optional(),
  openCheckpointItems: z.array(z.string()).optional(),
  repositoryMap: z.string().optional(),
});

/**
 * The host's backend call for one planned turn. Report a thread that cannot be resumed as
 * `resume_failed`: `runTurn` then retries once fresh. A throw counts as `backend_failed`.
 */
export type Execute = (plan: TurnPlan) => ResultAsync<TurnOutcome, KeelError> | Promise<Result<TurnOutcome, KeelError>>;

/**
 * What was being read or written when persistence failed; `lease` for the role's lease lost
 * during the turn (the turn was superseded).
 */
export type WarningTarget = "capsule" | "checkpoint" | "lease";

/**
 * A persistence problem during a turn. The turn's outcome stands; the warning says what was not
 * read or not saved. Also emitted as a `role.session.warning` event.
 */
export interface SessionWarning {
  /** What was being read or written. */
  target: WarningTarget;
  /**
   * `read`, `write`, `truncate` (content cut to the capsule bounds), or `lost` (target `lease`,
   * code `lease_lost`: the turn was superseded, see {@link RoleSessionTurnResult.superseded}).
   */
  operation: "read" | "write" | "truncate" | "lost";
  /** The store's error code (`not_found` for a capsule gone missing, `deleted` for one deleted during the turn, `too_large` for a truncation, `lease_lost` for a superseded turn). */
  code: KeelErrorCode;
  /** What happened, in words. */
  message: string;
}

/** What role sessions answer for a successful turn (`runTurn`). */
export interface RoleSessionTurnResult {
  /** The host's outcome, unchanged. */
  outcome: TurnOutcome;
  /** The plan the turn finally ran with (after a resume-failure retry, the `fresh` one). */
  plan: TurnPlan;
  /** Persistence warnings; empty when everything was read and saved. */
  warnings: SessionWarning[];
  /**
   * True when the role's lease was lost during the turn — another host took the role over, or
   * the lease expired unrenewed (a stalled process) — so its capsule and checkpoint writes were
   * refused `lease_lost`. The outcome stands (the work happened) but nothing of it was recorded:
   * the role's next turn, here or on the host that took over, does not know it, and
   * `plan.turn` is only the number it planned. A `lease` warning (`lost`, `lease_lost`) says the
   * same. Always `false` under the `fresh` policy, which holds no lease.
   */
  superseded: boolean;
}

/** @deprecated use {@link RoleSessionTurnResult}. */
export type TurnResult = RoleSessionTurnResult;
