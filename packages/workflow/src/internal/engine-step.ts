import { KeelError, digest, newId } from "@keel/core";
import type { Fence } from "@keel/store";
import { err, ok, ResultAsync, type Result } from "neverthrow";
import type { HandoffPacket, SignedPacket, StepBodySchema } from "../engine-requests.js";
import { fingerprintFiles, intakeEvidence } from "../evidence.js";
import { readJournal } from "../run-journal.js";
import { checkVersion, invalidateFrom, isTerminal, withEvidence, type RunDoc } from "../run-state.js";
import type { z } from "zod";
import { emitAll, leaseName, readRun, stateEvent, taskScope, writeRun, type EngineContext, type RunRead } from "./engine-context.js";
import { makePacket, runStage, settlePending, type RanCall, type StepState } from "./stage-run.js";
import { currentDefinitionsDigest } from "./engine-plan.js";
import { withRunLease } from "./run-lease.js";

/** What `step` did: the calls it made or replayed, and where the run now stands. */
export interface StepReport {
  run: RunDoc;
  ran: RanCall[];
  /**
   * Set when this step took over from a step that stopped mid-way (a crash, a lost lease): the
   * reservations it left open stay charged, and the calls it journaled are reused, never silently.
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
  const holder = `step-${newId()}`;
  return withRunLease(context.store.leases, name, holder, context.leaseTtlMs, (fence) => underLease(context, runId, body, fence));
}

function refuseStep(context: EngineContext, run: RunDoc, body: StepBody): KeelError | undefined {
  const version = checkVersion(run, body.version);
  if (version.isErr()) return version.error;
  if (run.status === "awaiting_checkpoint") {
    return new KeelError("conflict", `run ${run.runId} waits at checkpoint "${run.stages[run.position]?.id}": a local stage cannot advance it; call checkpoint`, {
      details: { runId: run.runId, status: run.status, reason: "awaiting_checkpoint" },
      retryable: false,
    });
  }
  if (isTerminal(run.status)) {
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
  let run = doc.value;
  if (body.evidence) {
    const snapshot = await intakeEvidence(body.evidence, context.sourceRoot, run.evidence);
    if (snapshot.isErr()) return err(snapshot.error);
    const fingerprints = Object.fromEntries(snapshot.value.files.map((file) => [file.path, file.hash]));
    // New evidence restarts the current segment: packets bound to the old snapshot no longer feed a stage.
    let segmentStart = 0;
    for (let index = run.position - 1; index >= 0; index--) if (run.plan.stages[index]?.kind === "checkpoint") { segmentStart = index + 1; break; }
    run = withEvidence(invalidateFrom({ ...run, position: run.position }, segmentStart), { snapshot: snapshot.value, fingerprints });
    run = { ...run, position: segmentStart };
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
  const journaledCalls = [...journal.value.keys()].filter((index) => index >= run.callIndex).length;
  const recovered = open.value.length > 0 || journaledCalls > 0 ? { openReservations: open.value.length, journaledCalls, fromCallIndex: run.callIndex } : null;
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
  const next: RunDoc = { ...state.run, version: doc.value.version + 1, updatedAt: context.clock.now() };
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
      return err(new KeelError("invalid_input", `handoff packet ${actual} of stage "${packet.stage}" is not a current packet of run ${run.runId} (an older cycle or another run): use the packets of the latest step`, { details: { reason: "stale_packet", digest: actual } }));
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
    const rebuilt = makePacket({ ...run, corrections: record.cycle }, planned, record.skill, journaled.call.model, record.callIndex, journaled.result.text);
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
