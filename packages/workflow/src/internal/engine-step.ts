import { KeelError, digest, newId } from "@keel/core";
import type { Fence } from "@keel/store";
import { createLeaseKeeper } from "@keel/store/kit";
import { err, ok, ResultAsync, type Result } from "neverthrow";
import type { HandoffPacket, SignedPacket, StepBodySchema } from "../engine-requests.js";
import { fingerprintFiles, intakeEvidence } from "../evidence.js";
import { classifyEvidenceChange } from "../evidence-change.js";
import { emptyEvidence, type EvidenceSnapshot } from "../evidence.js";
import { mergeHeld, mismatchedHeld, missingHeld } from "../evidence-retention.js";
import { readJournal } from "../run-journal.js";
import { checkVersion, invalidateFrom, isTerminal, withEvidence, type RunDoc } from "../run-state.js";
import type { z } from "zod";
import { emitAll, leaseName, readRun, stateEvent, taskScope, writeRun, type EngineContext, type RunRead } from "./engine-context.js";
import { decideContinue, decideInterrupted, findInterruptedWork } from "../run-handoff.js";
import { makePacket, runStage, settlePending, type RanCall, type StepState } from "./stage-run.js";
import { currentDefinitionsDigest } from "./engine-plan.js";

/** What `step` did: the calls it made or replayed, and where the run now stands. */
export interface StepReport {
  run: RunDoc;
  ran: RanCall[];
  /**
   * Set when this step found work a step left behind when it stopped mid-way (a crash, a lost
   * lease): the reservations it left open stay charged. Unless the caller continues explicitly
   * (`continueHandoff`), the run is handed off (`interrupted`) before any call would run again.
   */
  recovered: { openReservations: number; journaledCalls: number; fromCallIndex: number } | null;
}

type StepBody = z.output<typeof StepBodySchema>;

/**
 * Runs local stages from the run's position until a checkpoint, a handoff, a block or an end,
 * holding the run's lease. Every journal append is fenced by the lease and conditional on the
 * journal's seq; the step's last append carries its last call's record and the run's new state
 * (the commit) in one record, so a one-stage step is three durable writes: reserve, journal, settle.
 */
export function stepRun(context: EngineContext, runId: string, body: StepBody): ResultAsync<StepReport, KeelError> {
  return new ResultAsync(stepAsync(context, runId, body));
}

async function stepAsync(context: EngineContext, runId: string, body: StepBody): Promise<Result<StepReport, KeelError>> {
  const first = await readRun(context, runId);
  if (first.isErr()) return err(first.error);
  const refusal = refuseStep(context, first.value.value, body);
  if (refusal) return err(refusal);
  const name = leaseName(runId);
  const current = await context.store.leases.current(name);
  if (current.isErr()) return err(current.error);
  if (current.value) {
    return err(new KeelError("lease_held", `run ${runId} is being stepped by another caller (lease ${name}, until ${new Date(current.value.expiresAt).toISOString()}): wait for it, then read the status`, { details: { runId, holder: current.value.holder } }));
  }
  // The run's lease: taken without waiting (a live holder means another step is running:
  // `lease_held`), renewed while the step runs, released afterwards whatever the outcome. The
  // fence goes on the run's final write, so a step that lost its lease (it stalled past the TTL
  // and another step took over) writes nothing. A holder that dies leaves the lease to expire;
  // the next step takes it over. One keeper per step: each step is its own holder.
  const keeper = createLeaseKeeper({ leases: context.store.leases, holder: `step-${newId()}`, ttlMs: context.leaseTtlMs });
  return await keeper.run(name, async (fence) => {
    try {
      return await underLease(context, runId, body, fence);
    } catch (error) {
      return err(new KeelError("io_failed", `a workflow step failed unexpectedly: ${(error as Error).message}`, { cause: error }));
    }
  });
}

function refuseStep(context: EngineContext, stored: RunDoc, body: StepBody): KeelError | undefined {
  const version = checkVersion(stored, body.version);
  if (version.isErr()) return version.error;
  const continued = decideContinue(stored, body.continueHandoff === true);
  if (continued.isErr()) return continued.error;
  const run = continued.value;
  if (run.status === "awaiting_checkpoint") {
    return new KeelError("conflict", `run ${run.runId} waits at checkpoint "${run.stages[run.position]?.id}": a local stage cannot advance it; call checkpoint`, {
      details: { runId: run.runId, status: run.status, reason: "awaiting_checkpoint" },
      retryable: false,
    });
  }
  if (isTerminal(run.status)) {
    const interrupted = run.status === "handed_off" && run.outcome?.reason === "interrupted";
    if (interrupted) {
      return new KeelError("conflict", `run ${run.runId} was handed off: ${run.outcome!.message}`, { details: { runId: run.runId, status: run.status, reason: "interrupted", stage: run.outcome!.details["stage"] ?? null }, retryable: false });
    }
    return new KeelError("conflict", `run ${run.runId} has ended (${run.status}): start a new run for the task`, { details: { runId: run.runId, status: run.status, reason: "terminal" }, retryable: false });
  }
  const definitions = currentDefinitionsDigest(context, run);
  if (definitions !== run.definitionsDigest || context.routingDigest !== run.routingDigest) {
    const what = definitions !== run.definitionsDigest ? "the workflow definitions (catalog) changed" : "the routing configuration (models, preference) changed";
    return new KeelError("conflict", `run ${run.runId} was planned before ${what}: it is not resumed silently; abort it and start the task again (spent budget stays spent), or restore the old configuration`, {
      details: { runId: run.runId, reason: definitions !== run.definitionsDigest ? "catalog_changed" : "routing_changed" },
      retryable: false,
    });
  }
  return undefined;
}

async function underLease(context: EngineContext, runId: string, body: StepBody, fence: Fence): Promise<Result<StepReport, KeelError>> {
  const read = await readRun(context, runId);
  if (read.isErr()) return err(read.error);
  const doc: RunRead = read.value;
  const refusal = refuseStep(context, doc.value, body);
  if (refusal) return err(refusal);
  let run = decideContinue(doc.value, body.continueHandoff === true)._unsafeUnwrap();
  // A digests run keeps its evidence as digests: the step works on the evidence the caller passed back, and commits the digests.
  let held: EvidenceSnapshot | undefined;
  if (run.retention === "digests") {
    const taken = await takeHeldEvidence(context, run, body);
    if (taken.isErr()) return err(taken.error);
    held = taken.value.run.evidence;
    run = { ...taken.value.run, evidence: taken.value.full };
  } else if (body.evidence) {
    const snapshot = await intakeEvidence(body.evidence, context.sourceRoot, run.evidence);
    if (snapshot.isErr()) return err(snapshot.error);
    const fingerprints = Object.fromEntries(snapshot.value.files.map((file) => [file.path, file.hash]));
    const change = classifyEvidenceChange(run.evidence, snapshot.value);
    if (change.isErr()) return err(change.error);
    if (change.value.kind === "changed") return err(evidenceChanged(runId, change.value.fields));
    if (change.value.kind === "added") {
      // Evidence the run was missing: the stages already done stay done and their packets stay valid (nothing is paid for twice).
      run = withEvidence(run, { snapshot: snapshot.value, fingerprints });
    } else if (change.value.kind === "refreshed") {
      // The same files read again after they changed: the current segment restarts on the fresh excerpts.
      const segmentStart = segmentStartOf(run);
      run = withEvidence(invalidateFrom(run, segmentStart), { snapshot: snapshot.value, fingerprints });
      run = { ...run, position: segmentStart };
    }
  } else if (context.sourceRoot !== undefined && Object.keys(run.fingerprints).length > 0) {
    const now = await fingerprintFiles(context.sourceRoot, Object.keys(run.fingerprints));
    if (now.isErr()) return err(now.error);
    const changed = Object.keys(run.fingerprints).filter((path) => now.value[path] !== run.fingerprints[path]);
    if (changed.length > 0) {
      return err(
        new KeelError("conflict", `source files changed since the run read them (${changed.join(", ")}): the old plan is not resumed silently; step again with fresh evidence selecting them, or abort`, {
          details: { runId, reason: "source_changed", files: changed },
          retryable: false,
        }),
      );
    }
  }
  const journal = await readJournal(context.store.logs, runId);
  if (journal.isErr()) return err(journal.error);
  const packets = knownPackets(run, journal.value, body.packets ?? []);
  if (packets.isErr()) return err(packets.error);
  const scope = taskScope(context, run);
  const open = await scope.openReservations();
  if (open.isErr()) return err(open.error);
  const interrupted = findInterruptedWork(run, open.value, [...journal.value.keys()], { journaledCallsReplay: run.retention !== "digests" });
  if (interrupted.isErr()) return err(interrupted.error);
  const work = interrupted.value;
  const journaledCalls = [...journal.value.keys()].filter((index) => index >= run.callIndex).length;
  const recovered = work || journaledCalls > 0 ? { openReservations: work?.reservations.length ?? 0, journaledCalls, fromCallIndex: run.callIndex } : null;
  // Found work is reported once: the commit of this step (or its handoff) remembers the reservations.
  if (work) run = { ...run, interruptedReservations: [...(run.interruptedReservations ?? []), ...work.reservations].slice(-64) };
  const state: StepState = {
    run: { ...run, outcome: null, status: "ready" },
    journal: journal.value,
    prefixOpen: true,
    policy: body.onMismatch ?? context.onMismatch,
    tierCap: body.tierCap,
    packets: packets.value,
    ran: [],
    events: [],
    scope,
    seq: doc.seq,
    fence,
    pending: undefined,
    replayOnly: work !== undefined && body.continueHandoff !== true,
    interruptedAt: undefined,
  };
  for (;;) {
    const planned = state.run.plan.stages[state.run.position]!;
    if (planned.kind === "checkpoint") {
      state.run = { ...state.run, status: "awaiting_checkpoint", stages: setStatus(state.run, "awaiting") };
      break;
    }
    if (planned.skip) {
      state.run = { ...state.run, stages: state.run.stages.map((stage, index) => (index === state.run.position ? { ...stage, status: "skipped" as const, skip: planned.skip! } : stage)) };
      state.events.push({ type: "workflow.stage.completed", stage: planned.id, status: "skipped" });
      state.run = { ...state.run, position: state.run.position + 1 };
      continue;
    }
    const outcome = await runStage(context, state);
    if (outcome.isErr()) return err(outcome.error);
    if (outcome.value === "stop") break;
    state.run = { ...state.run, position: state.run.position + 1 };
  }
  if (state.interruptedAt && work) {
    // Nothing replayed is committed: the run stays where its last commit left it, so continuing replays the same journal from the same call index.
    const handedOff = decideInterrupted(doc.value, { ...state.interruptedAt, work, at: context.clock.now() });
    if (handedOff.isErr()) return err(handedOff.error);
    const written = await writeRun(context, { value: doc.value, seq: state.seq }, handedOff.value, { fence });
    if (written.isErr()) return err(written.error);
    emitAll(context, handedOff.value, [stateEvent(handedOff.value)]);
    return ok({ run: handedOff.value, ran: [], recovered });
  }
  const next: RunDoc = { ...state.run, ...(held ? { evidence: held } : {}), version: doc.value.version + 1, updatedAt: context.clock.now() };
  const pending = state.pending;
  const written = await writeRun(context, { value: doc.value, seq: state.seq }, next, { fence, ...(pending ? { call: pending.record } : {}) });
  if (written.isErr()) return err(written.error);
  if (pending) {
    // Committed: a failed settle leaves the reservation open, which the next step reports (recovered).
    const settled = await settlePending(pending);
    if (settled.isErr()) return err(settled.error);
  }
  emitAll(context, next, [...state.events, stateEvent(next)]);
  return ok({ run: next, ran: state.ran, recovered });
}

function setStatus(run: RunDoc, status: "awaiting") {
  return run.stages.map((stage, index) => (index === run.position ? { ...stage, status } : stage));
}

/**
 * The packet contents a step can use, by digest: passed back by the caller (each checked
 * against its digest and against the run's current packets), kept by the store (when the host
 * opted in), or rebuilt from the journal's results. A packet whose digest does not match is refused.
 */
function knownPackets(run: RunDoc, journal: Map<number, import("../run-journal.js").JournalRecord>, given: readonly SignedPacket[]): Result<Map<string, HandoffPacket>, KeelError> {
  const known = new Map<string, HandoffPacket>();
  const current = new Set(run.packets.map((packet) => packet.digest));
  for (const { digest: claimed, packet } of given) {
    const actual = digest(packet);
    if (actual !== claimed) {
      return err(new KeelError("invalid_input", `a handoff packet of stage "${packet.stage}" does not match its digest (claimed ${claimed}, actual ${actual}): it was changed; pass it back unchanged`, { details: { reason: "digest_mismatch", claimed, actual } }));
    }
    if (!current.has(actual)) {
      const why = stalePacketReason(run, packet);
      return err(new KeelError("invalid_input", `handoff packet ${actual} of stage "${packet.stage}" is stale: ${why.message}; pass back only the packets of the run's latest step`, { details: { reason: "stale_packet", digest: actual, why: why.code } }));
    }
    known.set(actual, packet);
  }
  for (const record of run.packets) {
    if (known.has(record.digest)) continue;
    if (record.content && digest(record.content) === record.digest) {
      known.set(record.digest, record.content);
      continue;
    }
    const journaled = journal.get(record.callIndex);
    if (!journaled || !journaled.result.ok) continue;
    const planned = run.plan.stages.find((stage) => stage.id === record.stage)!;
    const rebuilt = makePacket({ ...run, corrections: record.cycle, taskDigest: record.taskDigest ?? run.taskDigest, sourceDigest: record.sourceDigest ?? run.sourceDigest }, planned, record.skill, journaled.call.model, record.callIndex, journaled.result.text);
    if (digest(rebuilt) === record.digest) known.set(record.digest, rebuilt);
  }
  // A packet that can still feed a stage (same segment) must be known: never run a stage without its inputs.
  let segmentStart = 0;
  for (let index = run.position - 1; index >= 0; index--) if (run.plan.stages[index]?.kind === "checkpoint") { segmentStart = index + 1; break; }
  const segment = new Set(run.plan.stages.slice(segmentStart, run.position).map((stage) => stage.id));
  const missing = run.packets.filter((record) => segment.has(record.stage) && !known.has(record.digest)).map((record) => record.digest);
  if (missing.length > 0) {
    return err(new KeelError("not_found", `run ${run.runId} needs ${missing.length} handoff packet(s) it cannot rebuild (the journal lost them and the store keeps digests only): pass them back with step(..., { packets })`, { details: { runId: run.runId, reason: "packets_missing", digests: missing } }));
  }
  return ok(known);
}

/** Why a packet passed back is not one of the run's current packets, in words and as a code. */
function stalePacketReason(run: RunDoc, packet: HandoffPacket): { code: string; message: string } {
  if (packet.runId !== run.runId) return { code: "other_run", message: `it belongs to run ${packet.runId}, not ${run.runId}` };
  if (packet.cycle < run.corrections) return { code: "older_cycle", message: `it was made in correction cycle ${packet.cycle} and a revise since started cycle ${run.corrections}, which invalidated it` };
  const stage = run.stages.find((entry) => entry.id === packet.stage);
  if (!stage) return { code: "unknown_stage", message: `run ${run.runId} has no stage "${packet.stage}"` };
  if (packet.taskDigest !== run.taskDigest || packet.sourceDigest !== run.sourceDigest) {
    return { code: "evidence_changed", message: `it was made on evidence or source files that have changed since (its task digest or source digest is not the run's), and the stage was reset` };
  }
  return { code: "replaced", message: `stage "${packet.stage}" was reset or ran again since it was made (the run has ${stage.packets.length} current packet(s) for it)` };
}

/**
 * The evidence of a `digests` run for one step: the text fields the run holds as digests must come
 * back with the step (`evidence_missing` otherwise) and match their digests (`evidence_mismatch`);
 * the file excerpts are read again from the source root (a changed file is `source_changed`, as
 * for a `full` run). Then the same rules as a `full` run: only missing evidence is added, the
 * same files read again restart the segment, anything else is `evidence_changed`. Answers the run
 * with its held evidence (what is committed) and the whole evidence (what the prompts read).
 */
async function takeHeldEvidence(context: EngineContext, run: RunDoc, body: StepBody): Promise<Result<{ run: RunDoc; full: EvidenceSnapshot }, KeelError>> {
  const given = body.evidence ?? {};
  const mismatched = mismatchedHeld(run.evidence, given);
  if (mismatched.length > 0) {
    return err(new KeelError("invalid_input", `evidence.${mismatched.join(", evidence.")} passed back does not match the digest run ${run.runId} keeps (retention "digests"): pass back the evidence exactly as the run was last given it`, { details: { runId: run.runId, reason: "evidence_mismatch", fields: mismatched } }));
  }
  const missing = missingHeld(run.evidence, given);
  if (missing.length > 0) {
    return err(new KeelError("not_found", `run ${run.runId} keeps its evidence as digests only (retention "digests"): pass back evidence.${missing.join(", evidence.")} with the step`, { details: { runId: run.runId, reason: "evidence_missing", fields: missing } }));
  }
  const selections = given.files ?? run.evidence.files.map(({ path, firstLine, lastLine }) => ({ path, firstLine, lastLine }));
  const read = await intakeEvidence({ ...given, files: selections }, context.sourceRoot, { ...emptyEvidence(), validationStatus: run.evidence.validationStatus, revision: run.evidence.revision });
  if (read.isErr()) return err(read.error);
  if (given.files === undefined) {
    const changed = read.value.files.filter((file) => run.fingerprints[file.path] !== file.hash).map((file) => file.path);
    if (changed.length > 0) {
      return err(
        new KeelError("conflict", `source files changed since the run read them (${changed.join(", ")}): the old plan is not resumed silently; step again with fresh evidence selecting them, or abort`, {
          details: { runId: run.runId, reason: "source_changed", files: changed },
          retryable: false,
        }),
      );
    }
  }
  const held = mergeHeld(run.evidence, { ...given, files: selections }, read.value);
  const fingerprints = Object.fromEntries(held.files.map((file) => [file.path, file.hash]));
  const change = classifyEvidenceChange(run.evidence, held);
  if (change.isErr()) return err(change.error);
  switch (change.value.kind) {
    case "same":
      return ok({ run, full: read.value });
    case "changed":
      return err(evidenceChanged(run.runId, change.value.fields));
    case "added":
      return ok({ run: withEvidence(run, { snapshot: held, fingerprints }), full: read.value });
    case "refreshed": {
      const segmentStart = segmentStartOf(run);
      const restarted = withEvidence(invalidateFrom(run, segmentStart), { snapshot: held, fingerprints });
      return ok({ run: { ...restarted, position: segmentStart }, full: read.value });
    }
  }
}

/** The index of the first stage after the last checkpoint before the run's position. */
function segmentStartOf(run: RunDoc): number {
  for (let index = run.position - 1; index >= 0; index--) if (run.plan.stages[index]?.kind === "checkpoint") return index + 1;
  return 0;
}

function evidenceChanged(runId: string, fields: string[]): KeelError {
  return new KeelError("conflict", `step takes only evidence run ${runId} is missing, or the same files read again; it changes ${fields.join(", ")}, which only a checkpoint takes: bring it to the implementation checkpoint's accept or to a revise`, {
    details: { runId, reason: "evidence_changed", fields },
    retryable: false,
  });
}
