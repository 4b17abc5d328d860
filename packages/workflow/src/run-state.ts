import { KeelError, digest, type JsonObject, validate } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { CHECKPOINT_ACTIONS, RunVersionSchema, type CheckpointAction, type HandoffPacket, type Task } from "./engine-requests.js";
import { EvidenceSnapshotSchema, type EvidenceSnapshot } from "./evidence.js";
import type { SkipReason, WorkflowPlan } from "./workflow-plan.js";

/** Where a run is. Terminal: `completed`, `rejected`, `aborted`, `handed_off`, `failed`. */
export type RunState = "ready" | "awaiting_checkpoint" | "paused" | "completed" | "rejected" | "aborted" | "handed_off" | "failed";

/** The terminal run states. */
export const TERMINAL_STATES: readonly RunState[] = ["completed", "rejected", "aborted", "handed_off", "failed"];

/** Where a stage is. */
export type StageState = "pending" | "completed" | "skipped" | "awaiting" | "accepted" | "handed_off" | "failed";

/** A stage of a run. */
export interface StageRecord {
  id: string;
  status: StageState;
  /** Model calls made for the stage in the current cycle, across all its skills. */
  attempts: number;
  /** Models used, in order. */
  models: string[];
  /** Digests of the stage's current handoff packets. */
  packets: string[];
  skip?: SkipReason;
}

/** A handoff packet the run knows: its digest always, its content only if the host opted in. */
export interface PacketRecord {
  digest: string;
  stage: string;
  skill: string;
  role: string;
  callIndex: number;
  cycle: number;
  bytes: number;
  /** The task snapshot digest the packet is bound to (absent on runs written before it was kept: the run's). */
  taskDigest?: string;
  /** The source digest the packet is bound to (absent: the run's). */
  sourceDigest?: string;
  content?: HandoffPacket;
}

/** A recorded checkpoint decision (the note's digest only, never its text). */
export interface CheckpointRecord {
  stage: string;
  action: CheckpointAction;
  /** The run version the decision was made on. */
  version: number;
  at: number;
  noteDigest: string | null;
  validationStatus: EvidenceSnapshot["validationStatus"];
  acknowledgedUnverifiedChecks: boolean;
  disposition?: string;
}

/** Why a run stopped where it is (terminal, handed off, paused or blocked), with what to do. */
export interface RunOutcome {
  reason: string;
  message: string;
  details: JsonObject;
}

/** The task fields fixed under one task id. */
export type TaskIdentity = Omit<Task, "taskId" | "evidence" | "profile"> & { profile: string | null };

/** The stored run document. */
export interface RunDoc {
  schemaVersion: 1;
  runId: string;
  taskId: string;
  version: number;
  createdAt: number;
  updatedAt: number;
  task: TaskIdentity;
  plan: WorkflowPlan;
  definitionsDigest: string;
  routingDigest: string;
  evidence: EvidenceSnapshot;
  /** Digest of the task snapshot (identity and evidence) the current packets are bound to. */
  taskDigest: string;
  /** Hash of each evidence file at intake. */
  fingerprints: Record<string, string>;
  sourceDigest: string;
  status: RunState;
  /** Index of the stage to run or decide next. */
  position: number;
  stages: StageRecord[];
  /** Correction cycles used (shared by the whole run). */
  corrections: number;
  /** The next journal call index. */
  callIndex: number;
  packets: PacketRecord[];
  invalidatedPackets: number;
  checkpoints: CheckpointRecord[];
  outcome: RunOutcome | null;
  /**
   * Open reservations of interrupted steps the run has already reported (a handoff named them,
   * or a step that took over committed): they stay charged and are never reported again.
   */
  interruptedReservations?: string[];
  /**
   * `digests` when the run keeps its evidence (text and excerpts) and its calls' answers as
   * digests only (the engine's `retention` at start); absent for `full`.
   */
  retention?: "digests";
}

/**
 * The fields of a run document the decisions read: enough to refuse a value that is not a run
 * (`invalid_input`) before a decision reads it. The engine's own documents always pass.
 */
const RunShapeSchema = z.looseObject({
  runId: z.string(),
  version: z.number().int(),
  status: z.string(),
  position: z.number().int().nonnegative(),
  corrections: z.number().int().nonnegative(),
  plan: z.looseObject({ stages: z.array(z.looseObject({ id: z.string(), kind: z.string() })), maxCorrections: z.number().int().nonnegative(), reviseFrom: z.string() }),
  stages: z.array(z.looseObject({ id: z.string(), status: z.string() })),
  evidence: EvidenceSnapshotSchema,
  packets: z.array(z.looseObject({ stage: z.string() })),
  checkpoints: z.array(z.unknown()),
  invalidatedPackets: z.number().int().nonnegative(),
});

const DecisionInputSchema = z.strictObject({
  action: z.literal(CHECKPOINT_ACTIONS),
  version: RunVersionSchema,
  note: z.string().optional(),
  acknowledgeUnverifiedChecks: z.boolean().optional(),
  disposition: z.string().optional(),
  evidence: z.strictObject({ snapshot: EvidenceSnapshotSchema, fingerprints: z.record(z.string(), z.string()) }).optional(),
  at: z.number(),
});

const AbortInputSchema = z.strictObject({ at: z.number(), note: z.string().optional() });

/** `invalid_input` unless `run` has the shape of a run document. */
function checkRun(run: unknown): Result<RunDoc, KeelError> {
  return validate(RunShapeSchema, run, "run document").map(() => run as RunDoc);
}

/** True for a terminal state. */
export function isTerminal(state: RunState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** `conflict` unless `version` is the run's latest (a stale mutation changes nothing); `invalid_input` for a value that is not a run or a version. */
export function checkVersion(run: RunDoc, version: number): Result<RunDoc, KeelError> {
  const checked = checkRun(run).andThen(() => validate(RunVersionSchema, version, "run version"));
  if (checked.isErr()) return err(checked.error);
  if (run.version === version) return ok(run);
  return err(
    new KeelError("conflict", `run ${run.runId} is at version ${run.version}, not ${version}: read its status and decide again on the latest version`, {
      details: { runId: run.runId, expected: version, actual: run.version, reason: "stale_version" },
      retryable: false,
    }),
  );
}

function illegal(run: RunDoc, what: string, hint: string): KeelError {
  return new KeelError("conflict", `run ${run.runId} is ${run.status}${run.status === "awaiting_checkpoint" ? ` at "${run.stages[run.position]?.id}"` : ""}: cannot ${what}; ${hint}`, {
    details: { runId: run.runId, status: run.status, reason: "illegal_state" },
    retryable: false,
  });
}

/** The index a `revise` at `position` resumes from: `reviseFrom` when it lies before, else right after the previous checkpoint. */
export function reviseIndex(plan: WorkflowPlan, position: number): number {
  const from = plan.stages.findIndex((stage) => stage.id === plan.reviseFrom);
  if (from >= 0 && from < position) return from;
  for (let index = position - 1; index >= 0; index--) if (plan.stages[index]?.kind === "checkpoint") return index + 1;
  return 0;
}

/** Resets stages from `from` up to the current position: their packets are no longer valid. */
export function invalidateFrom(run: RunDoc, from: number): RunDoc {
  const reset = new Set(run.stages.slice(from, run.position + 1).map((stage) => stage.id));
  const kept = run.packets.filter((packet) => !reset.has(packet.stage));
  const stages = run.stages.map((stage, index) =>
    index >= from && index <= run.position && stage.status !== "skipped" ? { ...stage, status: "pending" as const, attempts: 0, packets: [] } : stage,
  );
  return { ...run, stages, packets: kept, invalidatedPackets: run.invalidatedPackets + run.packets.length - kept.length };
}

/** Input of {@link decideCheckpoint}. */
export interface CheckpointDecisionInput {
  action: CheckpointAction;
  version: number;
  note?: string | undefined;
  acknowledgeUnverifiedChecks?: boolean | undefined;
  disposition?: string | undefined;
  /** The evidence after intake (merged onto the run's), when the decision brought some. */
  evidence?: { snapshot: EvidenceSnapshot; fingerprints: Record<string, string> } | undefined;
  at: number;
}

/**
 * Decides a checkpoint, purely: the next run document, or why not (`invalid_input` first for a
 * run or an input of the wrong shape). Rules, in order:
 * 1. a stale version is `conflict` (nothing changes);
 * 2. only a run awaiting a checkpoint takes one (`conflict` otherwise);
 * 3. `accept` advances; at the final checkpoint it records the disposition and completes the
 *    run, and needs `acknowledgeUnverifiedChecks` when the checks failed or did not run;
 * 4. `reject` ends the run `rejected`; `abort` ends it `aborted`;
 * 5. `revise` needs evidence that changes the run's (`invalid_input` for none, `{}` or the same
 *    evidence again: nothing moves, no cycle is spent) and a correction cycle left (`limit_exceeded` when none): it
 *    resumes an issue workflow after its implementation checkpoint and a review workflow from
 *    exploration, invalidating every packet produced since; spent budgets stay spent.
 */
export function decideCheckpoint(run: RunDoc, input: CheckpointDecisionInput): Result<RunDoc, KeelError> {
  const checked = validate(DecisionInputSchema, input, "checkpoint decision");
  if (checked.isErr()) return err(checked.error);
  const current = checkVersion(run, input.version);
  if (current.isErr()) return err(current.error);
  if (run.status !== "awaiting_checkpoint") return err(illegal(run, "take a checkpoint decision", isTerminal(run.status) ? "the run has ended" : "call step to run its local stages first"));
  const stage = run.plan.stages[run.position]!;
  const evidence = input.evidence?.snapshot ?? run.evidence;
  const record: CheckpointRecord = {
    stage: stage.id,
    action: input.action,
    version: run.version,
    at: input.at,
    noteDigest: input.note ? digest(input.note) : null,
    validationStatus: evidence.validationStatus,
    acknowledgedUnverifiedChecks: input.acknowledgeUnverifiedChecks === true,
    ...(input.disposition !== undefined ? { disposition: input.disposition } : {}),
  };
  const base: RunDoc = {
    ...withEvidence(run, input.evidence),
    version: run.version + 1,
    updatedAt: input.at,
    checkpoints: [...run.checkpoints, record].slice(-64),
  };
  const setStage = (doc: RunDoc, status: StageState) => ({ ...doc, stages: doc.stages.map((entry, index) => (index === doc.position ? { ...entry, status } : entry)) });
  switch (input.action) {
    case "accept": {
      if (stage.final && evidence.validationStatus !== "passed" && input.acknowledgeUnverifiedChecks !== true) {
        return err(
          new KeelError("invalid_input", `the checks ${evidence.validationStatus === "failed" ? "failed" : "did not run"}: accepting the final checkpoint needs acknowledgeUnverifiedChecks: true (or revise with passing evidence)`, {
            details: { runId: run.runId, reason: "unverified_checks", validationStatus: evidence.validationStatus },
          }),
        );
      }
      const accepted = setStage(base, "accepted");
      if (stage.final) {
        const disposition = input.disposition ?? "accepted";
        return ok({ ...accepted, status: "completed", outcome: { reason: "accepted", message: `final checkpoint "${stage.id}" accepted: ${disposition}`, details: { disposition } } });
      }
      return ok({ ...accepted, status: "ready", position: run.position + 1, outcome: null });
    }
    case "reject":
      return ok({ ...setStage(base, "accepted"), status: "rejected", outcome: { reason: "rejected", message: `rejected at checkpoint "${stage.id}"`, details: {} } });
    case "abort":
      return ok({ ...base, status: "aborted", outcome: { reason: "aborted", message: `aborted at checkpoint "${stage.id}"`, details: {} } });
    case "revise": {
      // Evidence that changes nothing ({} or the same fields again) is no reason to revise: it would move the run and spend a cycle for nothing.
      if (!input.evidence || digest(input.evidence.snapshot) === digest(run.evidence)) {
        return err(
          new KeelError("invalid_input", "revise needs new evidence (the diff, test output or context the correction is about); evidence that changes nothing is refused and the run stays where it is", {
            details: { runId: run.runId, reason: "revise_without_evidence" },
          }),
        );
      }
      if (run.corrections >= run.plan.maxCorrections) {
        return err(
          new KeelError("limit_exceeded", `run ${run.runId} used all ${run.plan.maxCorrections} correction cycles: accept, reject or abort`, {
            details: { runId: run.runId, reason: "corrections_exhausted", used: run.corrections, limit: run.plan.maxCorrections },
          }),
        );
      }
      const from = reviseIndex(run.plan, run.position);
      const invalidated = invalidateFrom(base, from);
      return ok({ ...invalidated, status: "ready", position: from, corrections: run.corrections + 1, outcome: null });
    }
  }
}

/** Aborts a run that has not ended (any non-terminal state); `invalid_input` for arguments of the wrong type. */
export function decideAbort(run: RunDoc, version: number, at: number, note?: string): Result<RunDoc, KeelError> {
  const checked = validate(AbortInputSchema, { at, note }, "abort decision");
  if (checked.isErr()) return err(checked.error);
  const current = checkVersion(run, version);
  if (current.isErr()) return err(current.error);
  if (isTerminal(run.status)) return err(illegal(run, "abort", "the run has already ended"));
  const record: CheckpointRecord = {
    stage: run.stages[run.position]?.id ?? "",
    action: "abort",
    version: run.version,
    at,
    noteDigest: note ? digest(note) : null,
    validationStatus: run.evidence.validationStatus,
    acknowledgedUnverifiedChecks: false,
  };
  return ok({ ...run, version: run.version + 1, updatedAt: at, status: "aborted", checkpoints: [...run.checkpoints, record].slice(-64), outcome: { reason: "aborted", message: "aborted by the supervisor", details: {} } });
}

/** The run with new evidence: a new task snapshot digest, new fingerprints. */
export function withEvidence(run: RunDoc, evidence: CheckpointDecisionInput["evidence"]): RunDoc {
  if (!evidence) return run;
  return {
    ...run,
    evidence: evidence.snapshot,
    fingerprints: evidence.fingerprints,
    taskDigest: digest({ task: run.task, evidence: evidence.snapshot }),
    sourceDigest: digest(evidence.fingerprints),
  };
}

/** Rules every stored run keeps; the state-machine test checks them after every command. Returns the broken ones. */
export function runInvariants(run: RunDoc): string[] {
  const broken: string[] = [];
  const stage = run.plan.stages[run.position];
  if (run.position < 0 || run.position >= run.plan.stages.length) broken.push("position out of range");
  if (run.status === "awaiting_checkpoint" && stage?.kind !== "checkpoint") broken.push("awaiting a checkpoint on a local stage");
  if (run.status === "completed" && !(stage?.kind === "checkpoint" && stage.final)) broken.push("completed before the final checkpoint");
  if (run.corrections > run.plan.maxCorrections) broken.push("more corrections than allowed");
  run.stages.forEach((record, index) => {
    if (index > run.position && record.status !== "pending" && record.status !== "skipped") broken.push(`stage ${record.id} ahead of the position is ${record.status}`);
    if (record.status === "completed" && record.packets.length === 0) broken.push(`completed stage ${record.id} has no packet`);
    if (record.status === "skipped" && (record.attempts > 0 || record.packets.length > 0)) broken.push(`skipped stage ${record.id} cost something`);
  });
  const valid = new Set(run.packets.map((packet) => packet.digest));
  for (const record of run.stages) for (const packet of record.packets) if (!valid.has(packet)) broken.push(`stage ${record.id} keeps an invalidated packet`);
  if (run.checkpoints.some((checkpoint) => checkpoint.action === "accept" && !run.plan.stages.some((entry) => entry.id === checkpoint.stage && entry.kind === "checkpoint"))) broken.push("a local stage advanced as a checkpoint");
  return broken;
}
