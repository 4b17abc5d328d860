import { type KeelError, canonicalJson, digest, toKeelError, utf8Bytes, type JsonObject } from "@keel/core";
import type { BudgetScope, Reservation, SettleAmounts } from "@keel/budget";
import type { Fence } from "@keel/store";
import { err, ok, type Result } from "neverthrow";
import type { HandoffPacket, MismatchPolicy, SignedPacket } from "../engine-requests.js";
import type { Tier } from "../definition-schemas.js";
import { selectModel } from "../model-select.js";
import { RESPONSE_LIMITS, cutText } from "../response-bounds.js";
import { appendJournal, callHash, decideReplay, type JournalCall, type JournalRecord, type JournalResult } from "../run-journal.js";
import type { RunDoc, RunOutcome } from "../run-state.js";
import type { EffectiveRole, PlannedStage } from "../workflow-plan.js";
import { lostRace, type EngineContext, type PendingEvent } from "./engine-context.js";
import { holdResult } from "../evidence-retention.js";

/** One call made (or replayed) by a step. */
export interface RanCall {
  stage: string;
  skill: string;
  model: string;
  attempt: number;
  callIndex: number;
  source: "live" | "journal";
  ok: boolean;
  error?: string;
  /** The digest of the packet the call produced. */
  packetDigest?: string;
  /** The packet itself (left out of a step's answer when it would pass 40,000 bytes). */
  packet?: HandoffPacket;
}

/** The mutable state of one step (one process, holding the run's lease). */
export interface StepState {
  run: RunDoc;
  journal: Map<number, JournalRecord>;
  prefixOpen: boolean;
  policy: MismatchPolicy;
  tierCap: Tier | undefined;
  /** Packet contents known to this step, by digest. */
  packets: Map<string, HandoffPacket>;
  ran: RanCall[];
  events: PendingEvent[];
  scope: BudgetScope;
  /** The journal's last seq this step has seen: each append is conditional on it. */
  seq: number;
  /** The run lease's fence, on every append of the step. */
  fence: Fence;
  /**
   * The last live call's record and reservation, not yet journaled: appended (then settled)
   * before the next live call, or with the step's commit in one record when the step ends.
   */
  pending: PendingCall | undefined;
  /**
   * Set when the step found interrupted work and the caller did not continue explicitly: journaled
   * results are reused, and the first call that would run live stops the step instead (`interruptedAt`).
   */
  replayOnly: boolean;
  /** The stage and skill whose call a replay-only step would have had to run live. */
  interruptedAt: { stage: string; skill: string } | undefined;
}

/** A live call's result waiting for its journal record and its settlement. */
export interface PendingCall {
  record: JournalRecord;
  reservation: Reservation;
  settle: SettleAmounts;
}

/**
 * Journals the pending call (one append, fenced and over the step's seq) and settles its
 * reservation. A failed append leaves the reservation open: interrupted work keeps what it reserved.
 */
export async function flushPending(context: EngineContext, state: StepState): Promise<Result<void, KeelError>> {
  const pending = state.pending;
  if (!pending) return ok(undefined);
  const appended = await appendJournal(context.store.logs, state.run.runId, pending.record, { expectedSeq: state.seq, fence: state.fence });
  if (appended.isErr()) return err(lostRace(state.run.runId, appended.error));
  state.seq = appended.value;
  state.pending = undefined;
  return settlePending(pending);
}

/** Settles a journaled call's reservation (unused known time refunded). */
export async function settlePending(pending: PendingCall): Promise<Result<void, KeelError>> {
  const settled = await pending.reservation.settle(pending.settle);
  return settled.isErr() ? err(settled.error) : ok(undefined);
}

/** What a stage came to: go on to the next stage, or stop the step (with the run's status set). */
export type StageOutcome = "continue" | "stop";

const stop = (state: StepState, status: RunDoc["status"], outcome: RunOutcome): Result<StageOutcome, KeelError> => {
  const stageIndex = state.run.position;
  state.run = {
    ...state.run,
    status,
    outcome,
    stages: status === "handed_off" || status === "failed" ? state.run.stages.map((stage, index) => (index === stageIndex ? { ...stage, status } : stage)) : state.run.stages,
  };
  return ok("stop");
};

/** Runs the local stage at the run's position: each skill in order, within the stage's attempts. */
export async function runStage(context: EngineContext, state: StepState): Promise<Result<StageOutcome, KeelError>> {
  const planned = state.run.plan.stages[state.run.position]!;
  const role = state.run.plan.roles[planned.role!]!;
  const missing = missingEvidence(context, state, planned);
  if (missing) return missing;
  state.events.push({ type: "workflow.stage.started", stage: planned.id, status: "running" });
  const progress: StageProgress = { attempts: 0, models: [], packets: [] };
  for (const skillId of planned.skills) {
    const outcome = await runSkill(context, state, planned, role, skillId, progress);
    if (outcome.isErr() || outcome.value === "stop") return outcome;
  }
  const stages = state.run.stages.map((stage, index) =>
    index === state.run.position ? { ...stage, status: "completed" as const, attempts: progress.attempts, models: progress.models, packets: progress.packets } : stage,
  );
  state.run = { ...state.run, stages };
  state.events.push({ type: "workflow.stage.completed", stage: planned.id, status: "completed" });
  return ok("continue");
}

/** What a stage has used so far: attempts (across all its skills), models, packets. */
interface StageProgress {
  attempts: number;
  models: string[];
  packets: string[];
}

/** Stops before a stage whose skills need evidence the run does not have (nothing is spent). */
function missingEvidence(context: EngineContext, state: StepState, planned: PlannedStage): Result<StageOutcome, KeelError> | undefined {
  for (const skillId of planned.skills) {
    for (const need of context.catalog.skills.get(skillId)!.needs) {
      if (state.run.evidence[need].trim().length > 0) continue;
      return stop(state, "ready", {
        reason: "missing_evidence",
        message: `skill "${skillId}" of stage "${planned.id}" needs ${need === "diff" ? "a diff" : "test output"} and refuses empty evidence: call step again with evidence.${need}`,
        details: { stage: planned.id, skill: skillId, need },
      });
    }
  }
  return undefined;
}

/**
 * Runs one skill of a stage: route, replay or call, and on failure escalate to a strictly
 * stronger model while the stage has attempts left. `continue` when the skill produced its packet.
 */
async function runSkill(context: EngineContext, state: StepState, planned: PlannedStage, role: EffectiveRole, skillId: string, progress: StageProgress): Promise<Result<StageOutcome, KeelError>> {
  const skill = context.catalog.skills.get(skillId)!;
  const previousStrengths: number[] = [];
  for (;;) {
    if (progress.attempts >= role.attempts) {
      return stop(state, "handed_off", {
        reason: "attempts_exhausted",
        message: `stage "${planned.id}" used all ${role.attempts} attempts of role "${role.id}" (counted across its ${planned.skills.length} skills): the supervisor takes it over`,
        details: { stage: planned.id, skill: skillId, attempts: progress.attempts, limit: role.attempts },
      });
    }
    const prompt = buildPrompt(state, planned, skillId, skill.instructions, skill.outputBytes, progress.packets);
    const selection = selectModel({
      models: context.models,
      role,
      capabilities: skill.capabilities,
      tierCap: minTier(state.tierCap, state.run.plan.tierCap),
      allowedModels: state.run.plan.allowedModels,
      preference: context.preference,
      promptBytes: utf8Bytes(prompt),
      outputBytes: skill.outputBytes,
      previousStrengths,
    });
    if (selection.kind === "refused") {
      return stop(state, "handed_off", {
        reason: previousStrengths.length > 0 ? "no_stronger_model" : "model_ineligible",
        message: `stage "${planned.id}" (skill "${skillId}") has no eligible model: ${selection.reason}; the supervisor takes it over`,
        details: { stage: planned.id, skill: skillId, gate: selection.gate, ...selection.details },
      });
    }
    progress.attempts += 1;
    const callIndex = state.run.callIndex;
    const call: JournalCall = { stage: planned.id, skill: skillId, model: selection.model.id, attempt: progress.attempts, promptDigest: digest(prompt) };
    const obtained = await obtainResult(context, state, { planned, skillId, role, call, callIndex, prompt, model: selection.model, outputBytes: skill.outputBytes, estimatedTokens: selection.estimatedTokens });
    if (obtained.isErr() || obtained.value.kind === "stop") return obtained.isErr() ? err(obtained.error) : ok("stop");
    const { result, source } = obtained.value;
    state.run = { ...state.run, callIndex: callIndex + 1 };
    progress.models.push(selection.model.id);
    const { attempts, models } = progress;
    state.run = { ...state.run, stages: state.run.stages.map((stage, index) => (index === state.run.position ? { ...stage, attempts, models: [...models] } : stage)) };
    const ran = { stage: planned.id, skill: skillId, model: selection.model.id, attempt: progress.attempts, callIndex, source };
    if (!result.ok) {
      state.ran.push({ ...ran, ok: false, error: result.code });
      previousStrengths.push(selection.model.strength);
      if (role.escalation) continue;
      return stop(state, "handed_off", {
        reason: "attempt_failed",
        message: `skill "${skillId}" failed on ${selection.model.id} (${result.code}) and role "${role.id}" does not escalate: the supervisor takes it over`,
        details: { stage: planned.id, skill: skillId, code: result.code },
      });
    }
    const packet = recordPacket(context, state, planned, skillId, role.id, selection.model.id, callIndex, result.text);
    progress.packets.push(packet.digest);
    state.ran.push({ ...ran, ok: true, packetDigest: packet.digest, packet: packet.packet });
    return ok("continue");
  }
}

/**
 * The result of a call: reused from the journal, or made live; a changed call stops the
 * step by the mismatch policy, an exhausted budget hands the run off.
 */
async function obtainResult(
  context: EngineContext,
  state: StepState,
  live: LiveCall,
): Promise<Result<{ kind: "result"; result: JournalResult; source: RanCall["source"] } | { kind: "stop" }, KeelError>> {
  const replay = decideReplay(live.call, state.journal.get(live.callIndex), state.prefixOpen, state.policy);
  if (replay.kind === "reuse") return ok({ kind: "result", result: replay.record.result, source: "journal" });
  if (state.replayOnly) {
    state.interruptedAt = { stage: live.planned.id, skill: live.skillId };
    return ok({ kind: "stop" });
  }
  state.prefixOpen = false;
  if (replay.kind === "mismatch") {
    const next = replay.policy === "pause" ? "step again with onMismatch: \"rerun\" to run it live, or \"fail\" to end the run" : "the run failed";
    stop(state, replay.policy === "pause" ? "paused" : "failed", {
      reason: "replay_mismatch",
      message: `the journal's call ${live.callIndex} differs from the call stage "${live.planned.id}" would make now (${replay.diff.join("; ")}): ${next}`,
      details: { stage: live.planned.id, callIndex: live.callIndex, diff: replay.diff },
    });
    return ok({ kind: "stop" });
  }
  const made = await callLive(context, state, live);
  if (made.isErr()) return err(made.error);
  if (made.value.kind === "refused") {
    stop(state, "handed_off", { reason: "budget_exceeded", message: `${made.value.error.message}: the run hands off`, details: { stage: live.planned.id, ...made.value.error.details } });
    return ok({ kind: "stop" });
  }
  return ok({ kind: "result", result: made.value.result, source: "live" });
}

/** Makes a skill's packet and records its digest (and its content, when the host opted in). */
function recordPacket(context: EngineContext, state: StepState, planned: PlannedStage, skill: string, role: string, model: string, callIndex: number, text: string): SignedPacket {
  const packet = makePacket(state.run, planned, skill, model, callIndex, text);
  const packetDigest = digest(packet);
  state.packets.set(packetDigest, packet);
  const record = {
    digest: packetDigest,
    stage: planned.id,
    skill,
    role,
    callIndex,
    cycle: state.run.corrections,
    bytes: utf8Bytes(canonicalJson(packet)),
    taskDigest: packet.taskDigest,
    sourceDigest: packet.sourceDigest,
    ...(context.retainPacketContents ? { content: packet } : {}),
  };
  state.run = { ...state.run, packets: [...state.run.packets, record] };
  return { digest: packetDigest, packet };
}

interface LiveCall {
  planned: PlannedStage;
  skillId: string;
  role: EffectiveRole;
  call: JournalCall;
  callIndex: number;
  prompt: string;
  model: import("../model-select.js").Model;
  outputBytes: number;
  estimatedTokens: number;
}

/**
 * Reserve, call, journal, settle: the three durable writes of a live call. The journal record
 * waits (see {@link StepState.pending}) so that a step's last call carries the step's commit.
 */
async function callLive(context: EngineContext, state: StepState, live: LiveCall): Promise<Result<{ kind: "done"; result: JournalResult } | { kind: "refused"; error: KeelError }, KeelError>> {
  const flushed = await flushPending(context, state);
  if (flushed.isErr()) return err(flushed.error);
  const reservation = await state.scope.reserve({ timeMs: live.role.timeoutMs, calls: 1, tokens: live.estimatedTokens });
  if (reservation.isErr()) return reservation.error.code === "budget_exceeded" ? ok({ kind: "refused", error: reservation.error }) : err(reservation.error);
  const started = context.clock.now();
  let outcome: Result<import("../stage-execute.js").StageResult, KeelError>;
  try {
    outcome = await context.executeStage({
      runId: state.run.runId,
      taskId: state.run.taskId,
      stage: live.planned.id,
      role: live.role.id,
      skill: live.skillId,
      model: live.model,
      attempt: live.call.attempt,
      callIndex: live.callIndex,
      prompt: live.prompt,
      outputBytes: live.outputBytes,
      timeoutMs: live.role.timeoutMs,
    });
  } catch (error) {
    outcome = err(toKeelError(error, "backend_failed", "executeStage threw"));
  }
  const elapsed = Math.max(0, context.clock.now() - started);
  const result: JournalResult = outcome.isOk()
    ? {
        ok: true,
        text: typeof outcome.value.text === "string" ? outcome.value.text : "",
        tokens: outcome.value.tokens ?? null,
        costMicroUsd: outcome.value.costMicroUsd ?? null,
        durationMs: outcome.value.durationMs ?? elapsed,
      }
    : { ok: false, code: outcome.error.code, message: outcome.error.message.slice(0, 500), durationMs: elapsed };
  const bounded = boundResult(result, live.outputBytes);
  // A digests run journals the answer's digest only; the step still works on (and answers) the answer itself.
  const record: JournalRecord = { callIndex: live.callIndex, hash: callHash(live.call), call: live.call, result: state.run.retention === "digests" ? holdResult(bounded) : bounded };
  const timeMs = Math.min(live.role.timeoutMs, Math.round(result.durationMs));
  state.pending = {
    record,
    reservation: reservation.value,
    settle: {
      timeMs: result.ok || outcome.isErr() ? timeMs : live.role.timeoutMs,
      ...(result.ok && result.tokens !== null ? { tokens: result.tokens } : {}),
      ...(result.ok && result.costMicroUsd !== null ? { costMicroUsd: result.costMicroUsd } : {}),
    },
  };
  return ok({ kind: "done", result: bounded });
}

function boundResult(result: JournalResult, outputBytes: number): JournalResult {
  if (!result.ok) return result;
  return { ...result, text: cutText(result.text, Math.min(outputBytes, RESPONSE_LIMITS.packetBytes)).text };
}

function minTier(a: Tier | undefined, b: Tier | undefined): Tier | undefined {
  const order = ["light", "medium", "large", "maximum"];
  if (a === undefined) return b;
  if (b === undefined) return a;
  return order.indexOf(a) <= order.indexOf(b) ? a : b;
}

/** A skill's handoff packet, its JSON at most 12,000 bytes (the text cut with a marker when longer). */
export function makePacket(run: RunDoc, planned: PlannedStage, skill: string, model: string, callIndex: number, text: string): HandoffPacket {
  const base: HandoffPacket = {
    schemaVersion: 1,
    runId: run.runId,
    stage: planned.id,
    skill,
    role: planned.role!,
    model,
    callIndex,
    cycle: run.corrections,
    taskDigest: run.taskDigest,
    sourceDigest: run.sourceDigest,
    text: "",
    cut: false,
  };
  const overhead = utf8Bytes(canonicalJson(base)) + 16;
  // JSON escaping can grow text: cut until the whole packet fits.
  let room = RESPONSE_LIMITS.packetBytes - overhead;
  for (;;) {
    const cut = cutText(text, room);
    const packet = { ...base, text: cut.text, cut: cut.cut };
    if (utf8Bytes(canonicalJson(packet)) <= RESPONSE_LIMITS.packetBytes && cut.text.length <= 12_000) return packet;
    room = Math.floor(room * 0.8);
  }
}

/**
 * The whole prompt of a call, as canonical JSON: the task, the skill, the profile's
 * instructions and authority document paths (never their content), the evidence, and the
 * packets that may feed the stage — declared earlier stages of this segment, at most 16,000
 * bytes per role, what is left out said explicitly. Stages taking the original evidence get no packets.
 */
function buildPrompt(state: StepState, planned: PlannedStage, skillId: string, instructions: string, outputBytes: number, stagePackets: readonly string[]): string {
  const { run } = state;
  const fed: JsonObject[] = [];
  const omitted: JsonObject[] = [];
  if (!planned.originalEvidence) {
    const digests = [...run.packets.filter((packet) => planned.reads.includes(packet.stage) && packet.cycle === run.corrections).map((packet) => packet.digest), ...stagePackets];
    const perRole = new Map<string, number>();
    for (const packetDigest of digests) {
      const packet = state.packets.get(packetDigest);
      if (!packet) continue;
      const bytes = utf8Bytes(canonicalJson(packet));
      const used = perRole.get(packet.role) ?? 0;
      if (used + bytes > RESPONSE_LIMITS.roleBytes) {
        omitted.push({ stage: packet.stage, skill: packet.skill, role: packet.role, bytes, reason: `over the ${RESPONSE_LIMITS.roleBytes}-byte bound of one role's packets` });
        continue;
      }
      perRole.set(packet.role, used + bytes);
      fed.push({ stage: packet.stage, skill: packet.skill, role: packet.role, digest: packetDigest, text: packet.text });
    }
  }
  return canonicalJson({
    keel: "workflow-stage/1",
    workflow: run.plan.workflow,
    stage: planned.id,
    role: planned.role ?? null,
    skill: { id: skillId, instructions },
    objective: run.task.objective,
    scope: run.task.scope,
    profileInstructions: run.plan.instructions,
    authorityDocuments: run.plan.authorityDocuments,
    evidence: run.evidence as unknown as JsonObject,
    packets: fed,
    omittedPackets: omitted,
    output: { format: "text", maxBytes: outputBytes },
  });
}

