import { canonicalJson, utf8Bytes } from "@keel/core";
import type { BudgetDimension, ScopeSnapshot, Totals } from "@keel/budget";
import { RESPONSE_LIMITS } from "./response-bounds.js";
import type { RunDoc, RunOutcome, RunState, StageState } from "./run-state.js";

/** One stage as `status` reports it. */
export interface StageStatus {
  id: string;
  kind: "local" | "checkpoint";
  role: string | null;
  status: StageState;
  attempts: number;
  models: string[];
  packets: number;
  skipReason?: string;
}

/** The lease of a run as `status` sees it. */
export interface LeaseStatus {
  /** `free`, or `held` (a step is running). A lease whose holder died expires and reads as free: the next step takes it over. */
  state: "free" | "held";
  holder?: string;
  expiresAt?: number;
}

/** Budget use of the run's task scope. */
export interface BudgetStatus {
  /** Effective limits with the level that set each (`global`, `workflow`, `profile`); unlimited dimensions are absent. */
  limits: Partial<Record<BudgetDimension, { value: number; source: string }>>;
  /** Held by open reservations. */
  reserved: Totals;
  /** Charged by settled, abandoned and expired reservations. */
  settled: Totals;
  /** What is left per dimension (`null`: unlimited). */
  remaining: Record<BudgetDimension, number | null>;
  /** Open reservations (interrupted work keeps its reservation). */
  openReservations: number;
}

/**
 * A run's status, bounded to about 16,000 bytes (long stage lists are cut with `omittedStages`
 * saying how many were left out). Never a prompt, a source excerpt or a note.
 */
export interface RunStatus {
  runId: string;
  taskId: string;
  version: number;
  workflow: { id: string; version: string; kind: "issue" | "review" };
  profile: string | null;
  status: RunState;
  terminal: boolean;
  currentStage: string | null;
  /** The checkpoint waiting for the supervisor, when there is one. */
  awaiting: { stage: string; final: boolean; prompt: string } | null;
  completedStages: string[];
  stages: StageStatus[];
  omittedStages?: number;
  roles: { id: string; attempts: number }[];
  attempts: number;
  corrections: { used: number; limit: number };
  validationStatus: string;
  packets: { current: number; invalidated: number };
  budget: BudgetStatus | null;
  lease: LeaseStatus;
  /** Why the run stopped where it is (handoff, pause, block, end), with what to do. */
  outcome: RunOutcome | null;
  checkpoints: { stage: string; action: string; version: number; noteDigest: string | null }[];
}

/** Builds the bounded status of a run. */
export function buildStatus(run: RunDoc, budget: ScopeSnapshot | null, lease: LeaseStatus): RunStatus {
  const stages: StageStatus[] = run.stages.map((record, index) => {
    const planned = run.plan.stages[index]!;
    return {
      id: record.id,
      kind: planned.kind,
      role: planned.role ?? null,
      status: record.status,
      attempts: record.attempts,
      models: [...record.models],
      packets: record.packets.length,
      ...(record.skip ? { skipReason: record.skip } : {}),
    };
  });
  const roleAttempts = new Map<string, number>();
  for (const stage of stages) if (stage.role) roleAttempts.set(stage.role, (roleAttempts.get(stage.role) ?? 0) + stage.attempts);
  const current = run.plan.stages[run.position];
  const status: RunStatus = {
    runId: run.runId,
    taskId: run.taskId,
    version: run.version,
    workflow: { id: run.plan.workflow, version: run.plan.workflowVersion, kind: run.plan.kind },
    profile: run.plan.profile,
    status: run.status,
    terminal: ["completed", "rejected", "aborted", "handed_off", "failed"].includes(run.status),
    currentStage: current?.id ?? null,
    awaiting: run.status === "awaiting_checkpoint" && current ? { stage: current.id, final: current.final, prompt: current.prompt } : null,
    completedStages: run.stages.filter((stage) => stage.status === "completed" || stage.status === "accepted").map((stage) => stage.id),
    stages,
    roles: [...roleAttempts].map(([id, attempts]) => ({ id, attempts })),
    attempts: stages.reduce((sum, stage) => sum + stage.attempts, 0),
    corrections: { used: run.corrections, limit: run.plan.maxCorrections },
    validationStatus: run.evidence.validationStatus,
    packets: { current: run.packets.length, invalidated: run.invalidatedPackets },
    budget: budget ? budgetStatus(budget) : null,
    lease,
    outcome: run.outcome,
    checkpoints: run.checkpoints.slice(-8).map((checkpoint) => ({ stage: checkpoint.stage, action: checkpoint.action, version: checkpoint.version, noteDigest: checkpoint.noteDigest })),
  };
  return boundStatus(status);
}

function budgetStatus(snapshot: ScopeSnapshot): BudgetStatus {
  const limits: BudgetStatus["limits"] = {};
  for (const [dimension, limit] of Object.entries(snapshot.limits) as [BudgetDimension, { limit: number; source: string } | undefined][]) if (limit) limits[dimension] = { value: limit.limit, source: limit.source };
  return { limits, reserved: { ...snapshot.reserved }, settled: { ...snapshot.settled }, remaining: { ...snapshot.remaining }, openReservations: snapshot.openReservations };
}

/** Cuts a status to `RESPONSE_LIMITS.statusBytes` (16,000 bytes): per-stage models first, then stages around the current one, said explicitly. */
export function boundStatus(status: RunStatus): RunStatus {
  const size = (value: RunStatus) => utf8Bytes(canonicalJson(value));
  if (size(status) <= RESPONSE_LIMITS.statusBytes) return status;
  let bounded: RunStatus = { ...status, stages: status.stages.map((stage) => ({ ...stage, models: stage.models.slice(-1) })) };
  if (size(bounded) <= RESPONSE_LIMITS.statusBytes) return bounded;
  const position = Math.max(0, bounded.stages.findIndex((stage) => stage.id === status.currentStage));
  const full = bounded.stages;
  let keep = full.length;
  while (keep > 1 && size(bounded) > RESPONSE_LIMITS.statusBytes) {
    keep = Math.floor(keep * 0.8);
    const start = Math.max(0, Math.min(position - Math.floor(keep / 2), full.length - keep));
    bounded = { ...bounded, stages: full.slice(start, start + keep), omittedStages: status.stages.length - keep, completedStages: status.completedStages.slice(-keep) };
  }
  return bounded;
}
