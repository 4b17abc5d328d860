import { boundCapsule, withoutListMarker, type BoundedCapsule } from "./capsule-bounds.js";
import { CAPSULE_SCHEMA_VERSION, type Capsule, type CheckpointPointer } from "./capsule-schema.js";
import type { SessionActionKind, SessionReason, TurnConditions } from "./session-decision.js";

/** What a finished turn contributes to a capsule (successful or not). */
export interface TurnRecord {
  /** The mission of the capsule. */
  missionId: string;
  /** The role of the capsule. */
  role: string;
  /** The conditions the turn ran under (the capsule binds to them on success). */
  request: TurnConditions;
  /** The action the turn finally ran with (after a resume-failure retry, `fresh`). */
  action: SessionActionKind;
  /** Why that action was chosen. */
  reason: SessionReason;
  /** True when resuming failed during this turn (the thread was dropped). */
  resumeFailed: boolean;
  /** What the successful turn produced, or `null` when it failed. */
  result: {
    /** The provider thread the turn ran on, or `null`. */
    threadId: string | null;
    /** Input tokens observed for this turn. */
    inputTokens: number;
    /** A new repository map (replaces the old one). */
    repositoryMap?: string;
    /** The turn's decisive output (replaces the old one). */
    decisiveOutput?: string;
    /** Paths referenced in the turn (appended). */
    referencedPaths?: readonly string[];
    /** Paths inspected in the turn (appended). */
    inspectedPaths?: readonly string[];
    /** The role's open checkpoint items (replace the old ones). */
    openCheckpointItems?: readonly string[];
  } | null;
  /** Why the turn failed, or `null` when it succeeded. */
  failure: {
    /** The `KeelError` code. */
    code: string;
    /** The error message (bounded when stored). */
    message: string;
  } | null;
  /** The mission checkpoint version seen or written in the turn; `undefined` keeps the capsule's. */
  checkpoint?: CheckpointPointer | null;
  /** When the turn ended, epoch ms. */
  at: number;
}

/** An empty capsule bound to a request's backend, model and branch, without a thread. */
export function emptyCapsule(missionId: string, role: string, request: TurnConditions, at: number): Capsule {
  return {
    schemaVersion: CAPSULE_SCHEMA_VERSION,
    missionId,
    role,
    objectiveRevision: request.objectiveRevision,
    repositoryMap: null,
    referencedPaths: [],
    inspectedPaths: [],
    decisiveOutput: null,
    openCheckpointItems: [],
    checkpoint: null,
    thread: { backend: request.backend.id, model: request.model, branch: request.branch, threadId: null },
    counters: { turnsSinceRotation: 0, observedInputTokens: 0, rotations: 0, resumeFailures: 0, totalTurns: 0 },
    lastFailure: null,
    updatedAt: at,
  };
}

/** Appends `added` to `list`, moving repeated entries to the end; keeps a leading truncation marker. */
function mergePaths(list: readonly string[], added: readonly string[] | undefined): string[] {
  if (!added || added.length === 0) return [...list];
  const marker = withoutListMarker(list).length === list.length ? [] : list.slice(0, 1);
  const fresh = new Set(added);
  const kept = withoutListMarker(list).filter((entry) => !fresh.has(entry));
  return [...marker, ...kept, ...new Set(added)];
}

/**
 * Applies a finished turn to the role's current capsule (or to an empty one) and bounds the
 * result. Pure, so it can run again on a fresher read after a write conflict: counters are
 * computed from `current`, never from what the turn saw earlier.
 *
 * A successful turn binds the capsule to the request and the returned thread; a `resumed` turn
 * adds to the thread counters, any other action resets them to this turn alone; `rotated` counts
 * a rotation and a resume failure counts a resume failure. A failed turn records the failure and,
 * when the resume failed, drops the thread; nothing else changes.
 */
export function applyTurnToCapsule(current: Capsule | null, record: TurnRecord): BoundedCapsule {
  const base = current ?? emptyCapsule(record.missionId, record.role, record.request, record.at);
  const counters = { ...base.counters };
  if (record.resumeFailed) counters.resumeFailures++;
  const next: Capsule = { ...base, counters, updatedAt: record.at };
  if (record.checkpoint !== undefined) next.checkpoint = record.checkpoint;
  const result = record.result;
  if (!result) {
    if (record.failure) next.lastFailure = { code: record.failure.code, message: record.failure.message, at: record.at };
    if (record.resumeFailed) {
      next.thread = { ...base.thread, threadId: null };
      counters.turnsSinceRotation = 0;
      counters.observedInputTokens = 0;
    }
    return boundCapsule(next);
  }
  const request = record.request;
  next.objectiveRevision = request.objectiveRevision;
  next.thread = { backend: request.backend.id, model: request.model, branch: request.branch, threadId: result.threadId };
  counters.totalTurns++;
  if (record.action === "resumed") {
    counters.turnsSinceRotation++;
    counters.observedInputTokens = Math.min(Number.MAX_SAFE_INTEGER, counters.observedInputTokens + result.inputTokens);
  } else {
    counters.turnsSinceRotation = 1;
    counters.observedInputTokens = result.inputTokens;
    if (record.action === "rotated") counters.rotations++;
  }
  if (result.repositoryMap !== undefined) next.repositoryMap = result.repositoryMap;
  if (result.decisiveOutput !== undefined) next.decisiveOutput = result.decisiveOutput;
  if (result.openCheckpointItems !== undefined) next.openCheckpointItems = [...result.openCheckpointItems];
  next.referencedPaths = mergePaths(base.referencedPaths, result.referencedPaths);
  next.inspectedPaths = mergePaths(base.inspectedPaths, result.inspectedPaths);
  return boundCapsule(next);
}
