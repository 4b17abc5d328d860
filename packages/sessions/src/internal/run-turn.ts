import { KeelError, validate } from "@keel/core";
import type { Doc, Fence } from "@keel/store";
import { ResultAsync, errAsync, okAsync } from "neverthrow";
import type { Capsule } from "../capsule-schema.js";
import type { TurnRecord } from "../capsule-update.js";
import { parseCheckpoint, writeRoleItems } from "../mission-checkpoint.js";
import { decideSessionAction, type TurnConditions } from "../session-decision.js";
import { capsuleKey, checkpointKey, keyText, roleLeaseName } from "../session-keys.js";
import { resolvePolicy } from "../session-policy.js";
import { TurnRequestSchema, type Execute, type TurnOutcome, type TurnPlan, type TurnResult } from "../turn-types.js";
import { observedInputTokens, parseCapsuleValue, writeCapsule } from "./capsule-io.js";
import { callExecute } from "./execute-call.js";
import { createWarningSink, type TurnContext, type WarningSink } from "./turn-context.js";

/** A validated request with its decision inputs. */
interface Turn {
  missionId: string;
  role: string;
  conditions: TurnConditions;
  capsulePath: string;
  startedAt: number;
}

/** Runs one role turn: validate, then the `fresh` path (no store I/O) or the stateful path under the role's lease. */
export function runTurn(context: TurnContext, request: unknown, execute: Execute): ResultAsync<TurnResult, KeelError> {
  const parsed = validate(TurnRequestSchema, request, "turn request");
  if (parsed.isErr()) return errAsync(parsed.error);
  if (typeof execute !== "function") {
    return errAsync(new KeelError("invalid_input", "execute must be a function (plan) => Result of a turn outcome", { details: {} }));
  }
  const value = parsed.value;
  const turn: Turn = {
    missionId: value.missionId,
    role: value.role,
    conditions: {
      backend: value.backend,
      model: value.model ?? null,
      branch: value.branch ?? null,
      objectiveRevision: value.objectiveRevision,
    },
    capsulePath: keyText(capsuleKey(value.missionId, value.role)),
    startedAt: context.clock.now(),
  };
  if (resolvePolicy(context.policy, { resume: value.backend.resumable }) === "fresh") return runFreshTurn(context, turn, execute);
  return context.leaseKeeper.run(roleLeaseName(turn.missionId, turn.role), (fence) => runStatefulTurn(context, turn, execute, fence));
}

/** The plan of a turn: the pure session decision over the capsule (or none), as the host's `execute` receives it. */
function planTurn(context: TurnContext, turn: Turn, capsule: Capsule | null, number: number): TurnPlan {
  const decision = decideSessionAction({
    policy: context.policy,
    limits: context.limits,
    capsule,
    request: turn.conditions,
    capabilities: { resume: turn.conditions.backend.resumable },
  });
  return {
    missionId: turn.missionId,
    role: turn.role,
    policy: decision.policy,
    action: decision.action,
    reason: decision.reason,
    threadId: decision.threadId,
    // A copy: the capsule read may be the one this instance remembers (`context.capsules`).
    capsule: decision.action === "resumed" || !capsule ? null : structuredClone(capsule),
    capsulePath: turn.capsulePath,
    turn: number,
  };
}

/** The `fresh` policy: no capsule is read or written; the turn number is kept in this process only. */
function runFreshTurn(context: TurnContext, turn: Turn, execute: Execute): ResultAsync<TurnResult, KeelError> {
  const number = (context.freshTurns.get(turn.capsulePath) ?? 0) + 1;
  const plan = planTurn(context, turn, null, number);
  return callExecute(execute, plan).map((outcome) => {
    context.freshTurns.set(turn.capsulePath, Math.max(number, context.freshTurns.get(turn.capsulePath) ?? 0));
    emitTurn(context, turn, plan, outcome, false);
    return { outcome, plan, warnings: [] };
  });
}

/** What the turn read before planning. */
interface TurnReads {
  capsule: Capsule | null;
  capsuleExisted: boolean;
  /** The capsule document as read at the start of the turn, when it could be read. */
  capsuleDoc: { doc: Doc | undefined; capsule: Capsule | null } | undefined;
  checkpointExisted: boolean;
  checkpointVersion: number | null;
}

/** Reads the capsule and the mission checkpoint; every failure becomes a warning. */
function readState(context: TurnContext, turn: Turn, sink: WarningSink): ResultAsync<TurnReads, never> {
  const docs = context.store.docs;
  const key = capsuleKey(turn.missionId, turn.role);
  const capsuleRead = docs.get(key).match(
    (doc) => {
      if (!doc) {
        if (context.knownCapsules.has(turn.capsulePath)) {
          sink.warn("capsule", "read", {
            code: "not_found",
            message: `the capsule at ${turn.capsulePath} is gone (deleted?); the role starts a new thread and a new capsule`,
          });
        }
        return { capsule: null, capsuleExisted: false, capsuleDoc: { doc: undefined, capsule: null } };
      }
      context.knownCapsules.add(turn.capsulePath);
      const known = context.capsules.get(turn.capsulePath, doc);
      if (known) return { capsule: known, capsuleExisted: true, capsuleDoc: { doc, capsule: known } };
      const parsed = parseCapsuleValue(doc, turn.missionId, turn.role);
      if (parsed.isOk()) context.capsules.set(turn.capsulePath, doc, parsed.value);
      if (parsed.isErr()) {
        // It exists but is not a valid capsule of this role: ignored now, replaced when the turn saves.
        sink.warn("capsule", "read", parsed.error);
        return { capsule: null, capsuleExisted: true, capsuleDoc: { doc, capsule: null } };
      }
      return { capsule: parsed.value, capsuleExisted: true, capsuleDoc: { doc, capsule: parsed.value } };
    },
    (error) => {
      // Unreadable: whether it exists is unknown, so a missing one at save time is created.
      sink.warn("capsule", "read", error);
      return { capsule: null, capsuleExisted: false, capsuleDoc: undefined };
    },
  );
  const checkpointRead = readCheckpointVersion(context, turn.missionId).match(
    (found) => {
      if (!found) {
        sink.warn("checkpoint", "read", {
          code: "not_found",
          message: `mission "${turn.missionId}" has no checkpoint: call initMissionCheckpoint(missionId) when the mission starts`,
        });
      }
      return { checkpointExisted: found !== undefined, checkpointVersion: found?.version ?? null };
    },
    (error) => {
      sink.warn("checkpoint", "read", error);
      return { checkpointExisted: true, checkpointVersion: null };
    },
  );
  return ResultAsync.fromSafePromise(
    (async () => {
      const capsule = await capsuleRead;
      const checkpoint = await checkpointRead;
      return { ...capsule, ...checkpoint };
    })(),
  );
}

/** Reads the mission checkpoint's version (validated, or known valid at that version): `undefined` when there is none. */
function readCheckpointVersion(context: TurnContext, missionId: string): ResultAsync<{ version: number } | undefined, KeelError> {
  return context.store.docs.get(checkpointKey(missionId)).andThen((doc) => {
    if (!doc) return okAsync(undefined);
    if (context.checkpoints.get(missionId, doc)) return okAsync({ version: doc.version });
    return parseCheckpoint(doc, missionId).map(() => {
      context.checkpoints.set(missionId, doc, true);
      return { version: doc.version };
    });
  });
}

/** Plans, executes (retrying once fresh after a resume failure), saves, and reports one turn under the role's lease. */
function runStatefulTurn(context: TurnContext, turn: Turn, execute: Execute, fence: Fence): ResultAsync<TurnResult, KeelError> {
  const sink = createWarningSink(context, turn.missionId, turn.role);
  return readState(context, turn, sink).andThen((reads) => {
    const plan = planTurn(context, turn, reads.capsule, (reads.capsule?.counters.totalTurns ?? 0) + 1);
    return ResultAsync.fromSafePromise(executeWithRetry(execute, plan, reads.capsule)).andThen(({ finalPlan, result, resumeFailed }) => {
      const finished: FinishedTurn = {
        reads,
        plan: finalPlan,
        resumeFailed,
        sink,
        fence,
        outcome: result.isOk() ? result.value : null,
        failure: result.isErr() ? result.error : null,
      };
      // The capsule records what is known even of a failed turn; the failure is then returned as is.
      return saveTurn(context, turn, finished).andThen((turnNumber) => {
        if (result.isErr()) return errAsync(result.error);
        emitTurn(context, turn, { ...finalPlan, turn: turnNumber }, result.value, resumeFailed);
        return okAsync({ outcome: result.value, plan: finalPlan, warnings: sink.warnings });
      });
    });
  });
}

/** Executes a plan; a `resume_failed` on a resumed turn drops the thread and retries once fresh from the capsule. */
async function executeWithRetry(execute: Execute, plan: TurnPlan, capsule: Capsule | null) {
  const first = await callExecute(execute, plan);
  if (first.isOk() || first.error.code !== "resume_failed" || plan.action !== "resumed") {
    return { finalPlan: plan, result: first, resumeFailed: false };
  }
  const retryPlan: TurnPlan = { ...plan, action: "fresh", reason: "resume_failed", threadId: null, capsule: capsule && structuredClone(capsule) };
  return { finalPlan: retryPlan, result: await callExecute(execute, retryPlan), resumeFailed: true };
}

/** What {@link saveTurn} needs about the finished turn. */
interface FinishedTurn {
  reads: TurnReads;
  plan: TurnPlan;
  resumeFailed: boolean;
  sink: WarningSink;
  fence: Fence;
  outcome: TurnOutcome | null;
  failure: KeelError | null;
}

/**
 * Saves a finished turn: the role's checkpoint items (when the outcome has some), then the
 * capsule. Never fails: every persistence problem becomes a warning. Resolves the turn number.
 */
function saveTurn(context: TurnContext, turn: Turn, finished: FinishedTurn): ResultAsync<number, never> {
  const at = context.clock.now();
  return saveCheckpointItems(context, turn, finished, at).andThen((checkpointVersion) => {
    const pointer = checkpointVersion ?? finished.reads.checkpointVersion;
    const record: TurnRecord = {
      missionId: turn.missionId,
      role: turn.role,
      request: turn.conditions,
      action: finished.plan.action,
      reason: finished.plan.reason,
      resumeFailed: finished.resumeFailed,
      result: finished.outcome ? resultOf(finished.outcome) : null,
      failure: finished.failure ? { code: finished.failure.code, message: finished.failure.message } : null,
      ...(pointer !== null ? { checkpoint: { version: pointer } } : {}),
      at,
    };
    return saveCapsule(context, turn, finished, record);
  });
}

/** What a successful outcome contributes to the capsule. */
function resultOf(outcome: TurnOutcome): NonNullable<TurnRecord["result"]> {
  return {
    threadId: outcome.threadId,
    inputTokens: observedInputTokens(outcome),
    ...(outcome.repositoryMap !== undefined ? { repositoryMap: outcome.repositoryMap } : {}),
    ...(outcome.decisiveOutput !== undefined ? { decisiveOutput: outcome.decisiveOutput } : {}),
    ...(outcome.paths?.referenced ? { referencedPaths: outcome.paths.referenced } : {}),
    ...(outcome.paths?.inspected ? { inspectedPaths: outcome.paths.inspected } : {}),
    ...(outcome.openCheckpointItems !== undefined ? { openCheckpointItems: outcome.openCheckpointItems } : {}),
  };
}

/** Writes the role's checkpoint items, when the outcome has some. Resolves the checkpoint's new version, if written. */
function saveCheckpointItems(context: TurnContext, turn: Turn, finished: FinishedTurn, at: number): ResultAsync<number | undefined, never> {
  const items = finished.outcome?.openCheckpointItems;
  if (items === undefined) return okAsync(undefined);
  const written = writeRoleItems(context.store.docs, {
    missionId: turn.missionId,
    role: turn.role,
    items,
    turn: finished.plan.turn,
    at,
    existedBefore: finished.reads.checkpointExisted,
    fence: finished.fence,
  });
  return settle(
    written,
    (write) => {
      if (write.written) return write.version;
      finished.sink.warn("checkpoint", "write", {
        code: "deleted",
        message: `the checkpoint of mission "${turn.missionId}" was deleted during the turn; the role's items were not written`,
      });
      return undefined;
    },
    (error) => {
      finished.sink.warn("checkpoint", "write", error);
      return undefined;
    },
  );
}

/** Writes the capsule. Resolves the role's turn number as stored (or as planned when nothing was stored). */
function saveCapsule(context: TurnContext, turn: Turn, finished: FinishedTurn, record: TurnRecord): ResultAsync<number, never> {
  const { sink, plan } = finished;
  return settle(
    writeCapsule(context.store.docs, record, finished.reads.capsuleExisted, finished.fence, finished.reads.capsuleDoc),
    (written) => {
      if (written.deletedDuringTurn) {
        sink.warn("capsule", "write", {
          code: "deleted",
          message: `the capsule at ${turn.capsulePath} was deleted during the turn; it was not written again`,
        });
      }
      if (written.capsule) context.knownCapsules.add(turn.capsulePath);
      if (written.capsule && written.stamp) context.capsules.set(turn.capsulePath, written.stamp, written.capsule);
      if (written.truncated.length > 0) {
        sink.warn("capsule", "truncate", {
          code: "too_large",
          message: `the capsule at ${turn.capsulePath} was over its bounds; truncated with a marker: ${written.truncated.join(", ")}`,
        });
      }
      return written.capsule?.counters.totalTurns ?? plan.turn;
    },
    (error) => {
      sink.warn("capsule", "write", error);
      return plan.turn;
    },
  );
}

/** Turns a result into a value that cannot fail, through one handler per side. */
function settle<T, E, U>(result: ResultAsync<T, E>, onOk: (value: T) => U, onErr: (error: E) => U): ResultAsync<U, never> {
  return ResultAsync.fromSafePromise(result.match(onOk, onErr));
}

/** Emits `role.session.turn` for a successful turn. */
function emitTurn(context: TurnContext, turn: Turn, plan: TurnPlan, outcome: TurnOutcome, resumeFailed: boolean): void {
  context.events.emit({
    type: "role.session.turn",
    missionId: turn.missionId,
    role: turn.role,
    policy: plan.policy,
    action: plan.action,
    rotationReason: plan.reason,
    backend: turn.conditions.backend.id,
    model: turn.conditions.model,
    promptBytes: outcome.promptBytes,
    usage: outcome.usage,
    wallMs: Math.max(0, context.clock.now() - turn.startedAt),
    capsulePath: turn.capsulePath,
    threadId: outcome.threadId,
    turn: plan.turn,
    resumeFailed,
  });
}
