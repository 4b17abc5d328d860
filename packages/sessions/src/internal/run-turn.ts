import { KeelError } from "@keel/core";
import type { Doc, Fence } from "@keel/store";
import { ResultAsync, err, errAsync, ok, type Result } from "neverthrow";
import type { Capsule } from "../capsule-schema.js";
import type { TurnRecord } from "../capsule-update.js";
import { parseCheckpoint, writeRoleItems } from "../mission-checkpoint.js";
import { decideSessionAction, type TurnConditions } from "../session-decision.js";
import { capsuleKey, checkpointKey, keyText, roleLeaseName } from "../session-keys.js";
import { resolvePolicy } from "../session-policy.js";
import type { Execute, RoleSessionTurnRequest, RoleSessionTurnResult, TurnOutcome, TurnPlan } from "../turn-types.js";
import { observedInputTokens, parseCapsuleValue, replaceCapsule, writeCapsule } from "./capsule-io.js";
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

/**
 * Runs one role turn of a request validated at the entry point (`createRoleSessions`): the
 * `fresh` path (no store I/O) or the stateful path under the role's lease.
 */
export function runTurn(context: TurnContext, value: RoleSessionTurnRequest, execute: Execute, signal?: AbortSignal): ResultAsync<RoleSessionTurnResult, KeelError> {
  if (typeof execute !== "function") {
    return errAsync(new KeelError("invalid_input", "execute must be a function (plan) => Result of a turn outcome", { details: {} }));
  }
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
  return context.leaseKeeper.run(roleLeaseName(turn.missionId, turn.role), (fence) => runStatefulTurn(context, turn, execute, fence), signal === undefined ? undefined : { signal });
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
function runFreshTurn(context: TurnContext, turn: Turn, execute: Execute): ResultAsync<RoleSessionTurnResult, KeelError> {
  const number = (context.freshTurns.get(turn.capsulePath) ?? 0) + 1;
  const plan = planTurn(context, turn, null, number);
  return callExecute(execute, plan).map((outcome) => {
    context.freshTurns.set(turn.capsulePath, Math.max(number, context.freshTurns.get(turn.capsulePath) ?? 0));
    emitTurn(context, turn, plan, outcome, { resumeFailed: false, capsuleWritten: false, superseded: false });
    return { outcome, plan, warnings: [], superseded: false };
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
  /** The capsule could not be read because it is damaged (`corrupt`): the save replaces it. */
  capsuleDamaged?: boolean;
}

/*
 * The stateful path is written with async/await over the store's results (a `ResultAsync` is a
 * promise of a `Result`): one turn runs on every call of a host loop, and a chain of
 * `ResultAsync` steps costs a promise and a closure per step.
 */

/** Reads the capsule and the mission checkpoint (both started at once); every failure becomes a warning. */
async function readState(context: TurnContext, turn: Turn, sink: WarningSink): Promise<TurnReads> {
  const [capsuleRead, checkpointRead] = await Promise.all([context.store.docs.get(capsuleKey(turn.missionId, turn.role)), readCheckpointVersion(context, turn.missionId)]);
  let capsule: Pick<TurnReads, "capsule" | "capsuleExisted" | "capsuleDoc" | "capsuleDamaged">;
  if (capsuleRead.isErr()) {
    // Unreadable: whether it exists is unknown, so a missing one at save time is created; a
    // damaged one is replaced (the store keeps its bytes in quarantine), so the next turn resumes.
    const damaged = capsuleRead.error.code === "corrupt";
    sink.warn("capsule", "read", damaged ? { code: "corrupt", message: `${capsuleRead.error.message}; this turn runs fresh and its save replaces the damaged capsule` } : capsuleRead.error);
    capsule = { capsule: null, capsuleExisted: false, capsuleDoc: undefined, capsuleDamaged: damaged };
  } else if (!capsuleRead.value) {
    if (context.knownCapsules.has(turn.capsulePath)) {
      sink.warn("capsule", "read", {
        code: "not_found",
        message: `the capsule at ${turn.capsulePath} is gone (deleted?); the role starts a new thread and a new capsule`,
      });
    }
    capsule = { capsule: null, capsuleExisted: false, capsuleDoc: { doc: undefined, capsule: null } };
  } else {
    const doc = capsuleRead.value;
    context.knownCapsules.add(turn.capsulePath);
    if (doc.recovered) sink.warn("capsule", "read", servedFromBackup(turn.capsulePath, doc));
    const parsed = context.capsules.get(turn.capsulePath, doc) ?? parseCapsuleValue(doc, turn.missionId, turn.role).match(
      (value) => (context.capsules.set(turn.capsulePath, doc, value), value),
      (error) => {
        // It exists but is not a valid capsule of this role: ignored now, replaced when the turn saves.
        sink.warn("capsule", "read", error);
        return null;
      },
    );
    capsule = { capsule: parsed, capsuleExisted: true, capsuleDoc: { doc, capsule: parsed } };
  }
  if (checkpointRead.isOk() && checkpointRead.value?.recovered) {
    sink.warn("checkpoint", "read", servedFromBackup(`mission "${turn.missionId}" checkpoint`, checkpointRead.value as Doc));
  }
  if (checkpointRead.isErr()) {
    sink.warn("checkpoint", "read", checkpointRead.error);
    return { ...capsule, checkpointExisted: true, checkpointVersion: null };
  }
  if (!checkpointRead.value) {
    sink.warn("checkpoint", "read", {
      code: "not_found",
      message: `mission "${turn.missionId}" has no checkpoint: call initMissionCheckpoint(missionId) when the mission starts`,
    });
  }
  return { ...capsule, checkpointExisted: checkpointRead.value !== undefined, checkpointVersion: checkpointRead.value?.version ?? null };
}

/** The warning of a document the store served from its backup: one write older, its counters gone back. */
function servedFromBackup(what: string, doc: Doc): Pick<KeelError, "code" | "message"> {
  const { location, problem } = doc.recovered!;
  return {
    code: "corrupt",
    message: `${what} was served from its backup (${location}: ${problem}): it is one write older, so its counters went back to version ${doc.version}; the next save continues above every earlier version`,
  };
}

/** Reads the mission checkpoint's version (validated, or known valid at that version): `undefined` when there is none. */
async function readCheckpointVersion(context: TurnContext, missionId: string): Promise<Result<Pick<Doc, "version" | "recovered"> | undefined, KeelError>> {
  const read = await context.store.docs.get(checkpointKey(missionId));
  if (read.isErr() || !read.value) return read.map(() => undefined);
  const doc = read.value;
  const found = doc.recovered ? { version: doc.version, recovered: doc.recovered } : { version: doc.version };
  if (context.checkpoints.get(missionId, doc)) return ok(found);
  const parsed = await parseCheckpoint(doc, missionId);
  if (parsed.isErr()) return err(parsed.error);
  context.checkpoints.set(missionId, doc, true);
  return ok(found);
}

/** Plans, executes (retrying once fresh after a resume failure), saves, and reports one turn under the role's lease. */
function runStatefulTurn(context: TurnContext, turn: Turn, execute: Execute, fence: Fence): ResultAsync<RoleSessionTurnResult, KeelError> {
  return new ResultAsync(statefulTurn(context, turn, execute, fence));
}

async function statefulTurn(context: TurnContext, turn: Turn, execute: Execute, fence: Fence): Promise<Result<RoleSessionTurnResult, KeelError>> {
  const sink = createWarningSink(context, turn.missionId, turn.role);
  const reads = await readState(context, turn, sink);
  const plan = planTurn(context, turn, reads.capsule, (reads.capsule?.counters.totalTurns ?? 0) + 1);
  const { finalPlan, result, resumeFailed } = await executeWithRetry(execute, plan, reads.capsule);
  // The capsule records what is known even of a failed turn; the failure is then returned as is.
  const saved = await saveTurn(context, turn, {
    reads,
    plan: finalPlan,
    resumeFailed,
    sink,
    fence,
    outcome: result.isOk() ? result.value : null,
    failure: result.isErr() ? result.error : null,
  });
  // A write refused `lease_lost`: the lease was lost while the turn ran, so none of it was recorded.
  const superseded = sink.warnings.some((warning) => warning.operation === "write" && warning.code === "lease_lost");
  if (superseded) sink.warn("lease", "lost", supersededWarning(turn, saved.turn));
  if (result.isErr()) return err(result.error);
  emitTurn(context, turn, { ...finalPlan, turn: saved.turn }, result.value, { resumeFailed, capsuleWritten: saved.capsuleWritten, superseded });
  return ok({ outcome: result.value, plan: finalPlan, warnings: sink.warnings, superseded });
}

/** The warning of a superseded turn: the role's lease was lost while it ran, so nothing of it was recorded. */
function supersededWarning(turn: Turn, planned: number): Pick<KeelError, "code" | "message"> {
  return {
    code: "lease_lost",
    message:
      `the ${turn.role} lease of mission "${turn.missionId}" was lost during the turn (another host took the role over, or it expired unrenewed): ` +
      `its capsule and checkpoint writes were refused, so this turn's work is not recorded and turn ${planned} is only the number it planned`,
  };
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

/** What {@link saveTurn} stored. */
interface SavedTurn {
  /** The role's turn number as stored, or as planned when nothing was stored. */
  turn: number;
  /** Whether the capsule was written. */
  capsuleWritten: boolean;
}

/**
 * Saves a finished turn: the role's checkpoint items (when the outcome has some), then the
 * capsule. Never fails: every persistence problem becomes a warning.
 */
async function saveTurn(context: TurnContext, turn: Turn, finished: FinishedTurn): Promise<SavedTurn> {
  const at = context.clock.now();
  const checkpointVersion = await saveCheckpointItems(context, turn, finished, at);
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
async function saveCheckpointItems(context: TurnContext, turn: Turn, finished: FinishedTurn, at: number): Promise<number | undefined> {
  const items = finished.outcome?.openCheckpointItems;
  if (items === undefined) return undefined;
  const written = await writeRoleItems(context.store.docs, {
    missionId: turn.missionId,
    role: turn.role,
    items,
    turn: finished.plan.turn,
    at,
    existedBefore: finished.reads.checkpointExisted,
    fence: finished.fence,
  });
  if (written.isErr()) {
    finished.sink.warn("checkpoint", "write", written.error);
    return undefined;
  }
  if (written.value.written) return written.value.version;
  finished.sink.warn("checkpoint", "write", {
    code: "deleted",
    message: `the checkpoint of mission "${turn.missionId}" was deleted during the turn; the role's items were not written`,
  });
  return undefined;
}

/** Writes the capsule. Resolves the role's turn number as stored (or as planned when nothing was stored). */
async function saveCapsule(context: TurnContext, turn: Turn, finished: FinishedTurn, record: TurnRecord): Promise<SavedTurn> {
  const { sink, plan } = finished;
  const result = finished.reads.capsuleDamaged
    ? await replaceCapsule(context.store.docs, record, finished.fence)
    : await writeCapsule(context.store.docs, record, finished.reads.capsuleExisted, finished.fence, finished.reads.capsuleDoc);
  if (result.isErr()) {
    sink.warn("capsule", "write", result.error);
    return { turn: plan.turn, capsuleWritten: false };
  }
  const written = result.value;
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
  return { turn: written.capsule?.counters.totalTurns ?? plan.turn, capsuleWritten: written.capsule !== undefined };
}

/** How a successful turn ended, beside its plan and outcome. */
interface TurnEnding {
  resumeFailed: boolean;
  capsuleWritten: boolean;
  superseded: boolean;
}

/** Emits `role.session.turn` for a successful turn. */
function emitTurn(context: TurnContext, turn: Turn, plan: TurnPlan, outcome: TurnOutcome, ending: TurnEnding): void {
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
    ...ending,
  });
}
