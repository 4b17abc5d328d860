import { createEventBus, newId, parseSafeName, systemClock, validate, validateOrThrow, type Clock, type EventBus, type KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { createLeaseKeeper, keelStoreSchema } from "@keel/store/kit";
import { errAsync, type Result, type ResultAsync } from "neverthrow";
import { z } from "zod";
import type { Capsule } from "./capsule-schema.js";
import { readHandoffRecord, writeHandoffRecord, type Handoff, type HandoffRecord } from "./handoff.js";
import { readCapsuleDoc } from "./internal/capsule-io.js";
import { createDocMemo } from "./internal/doc-memo.js";
import { runTurn } from "./internal/run-turn.js";
import type { TurnContext } from "./internal/turn-context.js";
import { initCheckpoint, readCheckpoint, type InitializedCheckpoint, type MissionCheckpointRecord } from "./mission-checkpoint.js";
import { DEFAULT_ROLE_LEASE, RoleLeaseOptionsSchema, type RoleLeaseOptions } from "./role-lease.js";
import { capsuleKey, keyText } from "./session-keys.js";
import { DEFAULT_SESSION_LIMITS, SessionPolicySchema, type SessionLimits, type SessionPolicy } from "./session-policy.js";
import {
  HandleTurnRequestSchema,
  RoleSessionTurnOptionsSchema,
  RoleSessionTurnRequestSchema,
  type Execute,
  type RoleSessionTurnOptions,
  type RoleSessionTurnRequest,
  type RoleSessionTurnResult,
} from "./turn-types.js";

/** Options of {@link createRoleSessions}. */
export interface RoleSessionsOptions {
  /** Where capsules, checkpoints and handoffs live, and whose leases serialize a role's turns. */
  store: KeelStore;
  /** Receives `role.session.turn` and `role.session.warning`. Default: a private bus. */
  events?: EventBus;
  /** Default the system clock. */
  clock?: Clock;
  /** Default `auto`. */
  policy?: SessionPolicy;
  /** Overrides of {@link DEFAULT_SESSION_LIMITS}. */
  limits?: Partial<SessionLimits>;
  /**
   * The per mission-and-role lease: its time to live (default 30 s), how often it is renewed
   * while held (default a third of the TTL), how long a turn waits for a turn of the same role
   * elsewhere (default 10 minutes), and how long it stays held after a turn for the role's next
   * turn (default 0: released at once). See {@link RoleLeaseOptions} for the trade-off between
   * a fast failover and surviving a long pause.
   */
  lease?: RoleLeaseOptions;
}

/** One role of one mission: every operation is bound to it, so it cannot reach another role's state. */
export interface RoleSessionHandle {
  /** The mission it is bound to. */
  readonly missionId: string;
  /** The role it is bound to. */
  readonly role: string;
  /** The capsule's store key as a path. */
  readonly capsulePath: string;
  /** Runs one turn of this role (the request names no mission or role: a request that does is `invalid_input`). */
  runTurn(request: Omit<RoleSessionTurnRequest, "missionId" | "role">, execute: Execute, options?: RoleSessionTurnOptions): ResultAsync<RoleSessionTurnResult, KeelError>;
  /** Reads this role's capsule. */
  readCapsule(): ResultAsync<Capsule | undefined, KeelError>;
  /** Writes this role's handoff. */
  writeHandoff(handoff: Handoff): ResultAsync<HandoffRecord, KeelError>;
  /** Reads this role's handoff. */
  readHandoff(): ResultAsync<HandoffRecord | undefined, KeelError>;
}

/** Role sessions over a store: see {@link createRoleSessions}. */
export interface RoleSessions {
  /** The configured policy (before `auto` is resolved per backend). */
  readonly policy: SessionPolicy;
  /** The rotation limits in force. */
  readonly limits: Readonly<SessionLimits>;
  /**
   * Runs one role turn: plans the session action, calls `execute(plan)`, on `resume_failed`
   * drops the role's thread and retries once fresh from the capsule, then saves the capsule and
   * emits `role.session.turn`. Under `mission` and `rolling` the whole turn holds the role's
   * lease and its writes are fenced. Persistence problems never change a successful outcome:
   * they come back as `warnings` (and `role.session.warning` events). A failed `execute` is
   * returned as is, after the capsule recorded what is known.
   *
   * `options.signal` ends the wait for the role's lease (another turn of the role, here or on
   * another host): aborted before `execute` is called, the turn answers `aborted` at once and
   * nothing is written. Once `execute` runs, the signal is the host's to pass to its backend.
   */
  runTurn(request: RoleSessionTurnRequest, execute: Execute, options?: RoleSessionTurnOptions): ResultAsync<RoleSessionTurnResult, KeelError>;
  /** A handle bound to one role of one mission; `invalid_input` for names that are not safe. */
  forRole(missionId: string, role: string): Result<RoleSessionHandle, KeelError>;
  /** Reads a role's capsule: `undefined` when there is none, `corrupt` when it is not a valid capsule of that role. */
  readCapsule(missionId: string, role: string): ResultAsync<Capsule | undefined, KeelError>;
  /**
   * Creates the mission's empty checkpoint placeholder atomically (create-only): it never
   * overwrites an existing checkpoint. `created` says whether this call made it.
   */
  initMissionCheckpoint(missionId: string): ResultAsync<InitializedCheckpoint, KeelError>;
  /** Reads the mission checkpoint: `undefined` when there is none. */
  readMissionCheckpoint(missionId: string): ResultAsync<MissionCheckpointRecord | undefined, KeelError>;
  /**
   * Writes a role's handoff (`done`, `inFlight`, `nextSteps`, `warnings`), replacing the
   * previous one. Always allowed when storage works, whatever the hygiene limits, and resets no
   * counter.
   */
  writeHandoff(missionId: string, role: string, handoff: Handoff): ResultAsync<HandoffRecord, KeelError>;
  /** Reads a role's handoff: `undefined` when none was written. */
  readHandoff(missionId: string, role: string): ResultAsync<HandoffRecord | undefined, KeelError>;
  /**
   * Waits for the turns in flight and releases the role leases this instance holds. Call it
   * before closing the store; the instance may still be used afterwards (it takes leases again).
   */
  close(): Promise<void>;
}

const OptionsSchema = z.strictObject({
  store: keelStoreSchema(["docs", "leases"]),
  events: z.custom<EventBus>((value) => typeof (value as EventBus | undefined)?.emit === "function", "events must be an EventBus").optional(),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
  policy: SessionPolicySchema.optional(),
  limits: z
    .strictObject({
      maxTurns: z.number().int().positive().max(1_000_000).optional(),
      maxInputTokens: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    })
    .optional(),
  lease: RoleLeaseOptionsSchema.optional(),
});

function names(missionId: unknown, role: unknown): Result<{ missionId: string; role: string }, KeelError> {
  return parseSafeName(missionId, "missionId").andThen((mission) => parseSafeName(role, "role").map((name) => ({ missionId: String(mission), role: String(name) })));
}

/**
 * Creates role sessions over a store: policies (`fresh`, `mission`, `rolling`, `auto`), capsules
 * at `["missions", missionId, "role-sessions", role]`, rotation, resume fallback, the mission
 * checkpoint and handoffs. Bad options throw `invalid_input`.
 *
 * @example
 * ```ts
 * const sessions = createRoleSessions({ store: createMemoryStore(), policy: "rolling" });
 * const result = await sessions.runTurn(
 *   { missionId: "m1", role: "engineer", backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 },
 *   (plan) => okAsync({ text: "done", threadId: plan.threadId ?? "t-1", usage: null, promptBytes: 120 }),
 * );
 * ```
 */
export function createRoleSessions(options: RoleSessionsOptions): RoleSessions {
  const parsed = validateOrThrow(OptionsSchema, options, "role sessions options");
  const limits: SessionLimits = {
    maxTurns: parsed.limits?.maxTurns ?? DEFAULT_SESSION_LIMITS.maxTurns,
    maxInputTokens: parsed.limits?.maxInputTokens ?? DEFAULT_SESSION_LIMITS.maxInputTokens,
  };
  const clock = options.clock ?? systemClock;
  const context: TurnContext = {
    store: options.store,
    events: options.events ?? createEventBus({ clock }),
    clock,
    policy: parsed.policy ?? "auto",
    limits,
    leaseKeeper: createLeaseKeeper({
      leases: options.store.leases,
      holder: `role-sessions.${newId()}`,
      ttlMs: parsed.lease?.ttlMs ?? DEFAULT_ROLE_LEASE.ttlMs,
      ...(parsed.lease?.renewIntervalMs !== undefined ? { renewIntervalMs: parsed.lease.renewIntervalMs } : {}),
      waitMs: parsed.lease?.waitMs ?? DEFAULT_ROLE_LEASE.waitMs,
      lingerMs: parsed.lease?.lingerMs ?? DEFAULT_ROLE_LEASE.lingerMs,
    }),
    knownCapsules: new Set(),
    freshTurns: new Map(),
    capsules: createDocMemo(),
    checkpoints: createDocMemo(),
  };
  const docs = options.store.docs;

  const readCapsule = (missionId: string, role: string) =>
    names(missionId, role).asyncAndThen((valid) => readCapsuleDoc(docs, valid.missionId, valid.role).map((found) => found?.capsule));
  const writeHandoff = (missionId: string, role: string, handoff: Handoff) =>
    names(missionId, role).asyncAndThen((valid) => writeHandoffRecord(docs, clock, valid.missionId, valid.role, handoff));
  const readHandoff = (missionId: string, role: string) =>
    names(missionId, role).asyncAndThen((valid) => readHandoffRecord(docs, valid.missionId, valid.role));

  return {
    policy: context.policy,
    limits: Object.freeze({ ...limits }),
    runTurn: (request, execute, turnOptions) => {
      // Validated once, here at the entry point; the turn's path trusts it from here on.
      const checked = validate(RoleSessionTurnRequestSchema, request, "turn request");
      if (checked.isErr()) return errAsync(checked.error);
      const options = validate(RoleSessionTurnOptionsSchema, turnOptions, "turn options");
      return options.isErr() ? errAsync(options.error) : runTurn(context, checked.value, execute, options.value?.signal);
    },
    forRole: (missionId, role) =>
      names(missionId, role).map((valid): RoleSessionHandle => ({
        missionId: valid.missionId,
        role: valid.role,
        capsulePath: keyText(capsuleKey(valid.missionId, valid.role)),
        runTurn: (request, execute, turnOptions) => {
          // Validated strictly, once, here: a request naming a mission or role is refused, not merged.
          const checked = validate(HandleTurnRequestSchema, request, "role turn request");
          if (checked.isErr()) return errAsync(checked.error);
          const options = validate(RoleSessionTurnOptionsSchema, turnOptions, "turn options");
          if (options.isErr()) return errAsync(options.error);
          return runTurn(context, { ...checked.value, missionId: valid.missionId, role: valid.role }, execute, options.value?.signal);
        },
        readCapsule: () => readCapsule(valid.missionId, valid.role),
        writeHandoff: (handoff) => writeHandoff(valid.missionId, valid.role, handoff),
        readHandoff: () => readHandoff(valid.missionId, valid.role),
      })),
    readCapsule,
    initMissionCheckpoint: (missionId) => parseSafeName(missionId, "missionId").asyncAndThen((valid) => initCheckpoint(docs, clock, valid)),
    readMissionCheckpoint: (missionId) => parseSafeName(missionId, "missionId").asyncAndThen((valid) => readCheckpoint(docs, valid)),
    writeHandoff,
    readHandoff,
    close: () => context.leaseKeeper.close(),
  };
}
