import { UsageSchema, isCount, isPlainObjectOf, isSafeName, utf8Bytes, type KeelError, type KeelErrorCode, type Usage } from "@keel/core";
import type { Result, ResultAsync } from "neverthrow";
import { z } from "zod";
import { CAPSULE_LIMITS, ObjectiveRevisionSchema, isObjectiveRevision, type Capsule, type ObjectiveRevision } from "./capsule-schema.js";
import type { SessionActionKind, SessionReason } from "./session-decision.js";
import type { EffectivePolicy } from "./session-policy.js";

/** What a host asks for one role turn. */
export interface TurnRequest {
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

/** A {@link TurnRequest} without mission and role, for a role handle that fixes both. */
export type RoleTurnRequest = Omit<TurnRequest, "missionId" | "role">;

const withinBindingBytes = (value: string) => utf8Bytes(value) <= CAPSULE_LIMITS.maxBindingBytes;

const bindingText = z.string().min(1).refine(withinBindingBytes, {
  message: `must be at most ${CAPSULE_LIMITS.maxBindingBytes} bytes`,
});

const safeName = z.string().refine(isSafeName, {
  message: "not a safe name: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit",
});

const roleTurnFields = {
  backend: z.strictObject({ id: safeName, resumable: z.boolean() }),
  model: bindingText.nullable().optional(),
  branch: bindingText.nullable().optional(),
  objectiveRevision: ObjectiveRevisionSchema,
};

/** zod schema of a {@link RoleTurnRequest} (strict). */
export const RoleTurnRequestSchema = z.strictObject(roleTurnFields);

/** zod schema of a {@link TurnRequest} (strict). */
export const TurnRequestSchema = z.strictObject({
  missionId: safeName,
  role: safeName,
  ...roleTurnFields,
});

/** True for what `bindingText` accepts (model, branch, thread id), without zod. */
function isBindingText(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && withinBindingBytes(value);
}

/** True when `key` is absent from `owner`, or holds `null` or a binding text. */
function isOptionalBinding(owner: object, key: string, field: unknown): boolean {
  return !Object.hasOwn(owner, key) || field === null || isBindingText(field);
}

const REQUEST_KEYS = ["missionId", "role", "backend", "model", "branch", "objectiveRevision"];
const ROLE_REQUEST_KEYS = ["backend", "model", "branch", "objectiveRevision"];
const BACKEND_KEYS = ["id", "resumable"];

type ParsedTurnRequest = z.output<typeof TurnRequestSchema>;

/** Accepts a plainly valid request (with or without mission and role) as a copy; `undefined` for the schema to judge. */
function acceptRequest(value: unknown, withNames: boolean): Partial<ParsedTurnRequest> | undefined {
  if (!isPlainObjectOf(value, withNames ? REQUEST_KEYS : ROLE_REQUEST_KEYS)) return undefined;
  const { missionId, role, backend, model, branch, objectiveRevision } = value;
  if (withNames && (!isSafeName(missionId) || !isSafeName(role))) return undefined;
  if (!isPlainObjectOf(backend, BACKEND_KEYS)) return undefined;
  const { id, resumable } = backend;
  if (!isSafeName(id) || typeof resumable !== "boolean" || !isObjectiveRevision(objectiveRevision)) return undefined;
  // Optional and nullable: absent, null or a binding text; a key holding `undefined` goes to the schema.
  if (!isOptionalBinding(value, "model", model) || !isOptionalBinding(value, "branch", branch)) return undefined;
  const request: Partial<ParsedTurnRequest> = { backend: { id, resumable }, objectiveRevision };
  if (withNames) Object.assign(request, { missionId, role });
  if (Object.hasOwn(value, "model")) request.model = model as string | null;
  if (Object.hasOwn(value, "branch")) request.branch = branch as string | null;
  return request;
}

/**
 * The fast `accept` (see `validateFast` in @keel/core) of a turn request: a copy of a plainly
 * valid request, else `undefined` for {@link TurnRequestSchema} to judge. Exported for its
 * property test against the schema.
 */
export function acceptTurnRequest(value: unknown): ParsedTurnRequest | undefined {
  return acceptRequest(value, true) as ParsedTurnRequest | undefined;
}

/** {@link acceptTurnRequest} for a role handle's request (no mission or role), against {@link RoleTurnRequestSchema}. */
export function acceptRoleTurnRequest(value: unknown): z.output<typeof RoleTurnRequestSchema> | undefined {
  return acceptRequest(value, false) as z.output<typeof RoleTurnRequestSchema> | undefined;
}

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

const OUTCOME_KEYS = ["text", "threadId", "usage", "promptBytes", "decisiveOutput", "paths", "openCheckpointItems", "repositoryMap"];
const OUTCOME_PATHS_KEYS = ["referenced", "inspected"];
const USAGE_KEYS = ["inputUncached", "cacheRead", "cacheWrite", "output", "reasoning", "costUsd"];

function isStringList(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== "string") return false;
  return true;
}

function isUsage(value: unknown): boolean {
  if (!isPlainObjectOf(value, USAGE_KEYS)) return false;
  // Every key is required: a missing one reads as `undefined`, which no branch below accepts.
  for (const key of USAGE_KEYS) {
    const field = value[key];
    if (field === null) continue;
    if (key === "costUsd" ? typeof field !== "number" || !Number.isFinite(field) || field < 0 : !isCount(field)) return false;
  }
  return true;
}

/**
 * The fast check (see `validateFast` in @keel/core) of a turn outcome: true for a plainly valid
 * one, false for anything the schema must judge. Unknown keys make it false too (the schema
 * drops them). Exported for its property test against the schema.
 */
export function isPlainTurnOutcome(value: unknown): value is TurnOutcome {
  if (!isPlainObjectOf(value, OUTCOME_KEYS)) return false;
  const { text, threadId, usage, promptBytes, decisiveOutput, paths, openCheckpointItems, repositoryMap } = value;
  if (typeof text !== "string" || (threadId !== null && !isBindingText(threadId)) || (usage !== null && !isUsage(usage)) || !isCount(promptBytes)) return false;
  if (Object.hasOwn(value, "decisiveOutput") && typeof decisiveOutput !== "string") return false;
  if (Object.hasOwn(value, "repositoryMap") && typeof repositoryMap !== "string") return false;
  if (Object.hasOwn(value, "openCheckpointItems") && !isStringList(openCheckpointItems)) return false;
  if (!Object.hasOwn(value, "paths")) return true;
  if (!isPlainObjectOf(paths, OUTCOME_PATHS_KEYS)) return false;
  for (const key of OUTCOME_PATHS_KEYS) if (Object.hasOwn(paths, key) && !isStringList(paths[key])) return false;
  return true;
}

/**
 * The host's backend call for one planned turn. Report a thread that cannot be resumed as
 * `resume_failed`: `runTurn` then retries once fresh. A throw counts as `backend_failed`.
 */
export type Execute = (plan: TurnPlan) => ResultAsync<TurnOutcome, KeelError> | Promise<Result<TurnOutcome, KeelError>>;

/** What was being read or written when persistence failed. */
export type WarningTarget = "capsule" | "checkpoint";

/**
 * A persistence problem during a turn. The turn's outcome stands; the warning says what was not
 * read or not saved. Also emitted as a `role.session.warning` event.
 */
export interface SessionWarning {
  /** What was being read or written. */
  target: WarningTarget;
  /** `read`, `write`, or `truncate` (content cut to the capsule bounds). */
  operation: "read" | "write" | "truncate";
  /** The store's error code (`not_found` for a capsule gone missing, `deleted` for one deleted during the turn, `too_large` for a truncation). */
  code: KeelErrorCode;
  /** What happened, in words. */
  message: string;
}

/** What `runTurn` returns for a successful turn. */
export interface TurnResult {
  /** The host's outcome, unchanged. */
  outcome: TurnOutcome;
  /** The plan the turn finally ran with (after a resume-failure retry, the `fresh` one). */
  plan: TurnPlan;
  /** Persistence warnings; empty when everything was read and saved. */
  warnings: SessionWarning[];
}
