import {
  validate,
  type AgentIoEvent,
  type KeelError,
  type KeelEvent,
  type RoleSessionTurnEvent,
  type RoundReviewCompletedEvent,
} from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";
import type { EventAnalysis, PolicyAnalysis, RoundAgreement, VerdictAgreement } from "./analysis-types.js";
import { KeelEventSchema } from "./event-schema.js";
import { compareText, createPolicyAttribution } from "./internal/analysis-attribution.js";
import { PolicyBuilder } from "./internal/policy-builder.js";

const EventsSchema = z.array(KeelEventSchema);

const normalizeVerdict = (verdict: string): string => verdict.trim().toLowerCase();

/** Reviewer verdict agreement across policies, matching rounds by round number. */
function agreementOf(policies: readonly PolicyAnalysis[]): VerdictAgreement {
  const byRound = new Map<number, Record<string, string>>();
  for (const policy of policies) {
    // Verdicts are sorted by round then time: the last one of a round is the latest.
    for (const verdict of policy.verdicts) {
      const verdicts = byRound.get(verdict.round) ?? {};
      verdicts[policy.policy] = verdict.verdict;
      byRound.set(verdict.round, verdicts);
    }
  }
  const rounds: RoundAgreement[] = [...byRound]
    .filter(([, verdicts]) => Object.keys(verdicts).length >= 2)
    .sort(([left], [right]) => left - right)
    .map(([round, verdicts]) => ({
      round,
      verdicts,
      agree: new Set(Object.values(verdicts).map(normalizeVerdict)).size === 1,
    }));
  return { matchedRounds: rounds.length, agreeingRounds: rounds.filter((round) => round.agree).length, rounds };
}

/**
 * Analyses recorded Keel events per session policy and per role: turns by action, rotations by
 * reason, prompt bytes (total, per role, and the reviewer's separately — the role named
 * `reviewer` in any case), observed input tokens (the sum of `totalInputTokens(usage)`), a
 * per-turn series for charts, repeated reads (the same path read again by the same role in the
 * same mission, from `agent.io.read`), reviewer verdicts per round and their agreement across
 * policies on rounds matched by round number.
 *
 * Turns carry their policy (`role.session.turn.policy`). A read goes to the policy its mission
 * ran under; a verdict to its `policy` field, else to its mission's policy. Other event types
 * are accepted and not counted. Pure: the result depends only on the events, not on their
 * order within a mission (totals, per-role values and series are the same in any order).
 *
 * @returns the analysis, or `invalid_input` when an event is malformed (see {@link KeelEventSchema}).
 *
 * @example
 * ```ts
 * const analysis = analyzeEvents(events);
 * if (analysis.isOk()) console.log(renderReport(analysis.value, { format: "text" })._unsafeUnwrap());
 * ```
 */
export function analyzeEvents(events: readonly KeelEvent[]): Result<EventAnalysis, KeelError> {
  return validate(EventsSchema, events, "events").map((valid) => {
    const turns: RoleSessionTurnEvent[] = [];
    const reads: AgentIoEvent<"agent.io.read">[] = [];
    const verdicts: RoundReviewCompletedEvent[] = [];
    for (const event of valid) {
      if (event.type === "role.session.turn") turns.push(event);
      else if (event.type === "agent.io.read") reads.push(event);
      else if (event.type === "round.review.completed") verdicts.push(event);
    }
    const attribute = createPolicyAttribution(turns);
    const builders = new Map<string, PolicyBuilder>();
    const builder = (policy: string): PolicyBuilder => {
      let found = builders.get(policy);
      if (!found) {
        found = new PolicyBuilder(policy);
        builders.set(policy, found);
      }
      return found;
    };
    let unattributed = 0;
    for (const turn of turns) builder(turn.policy).addTurn(turn);
    for (const read of reads) {
      const policy = attribute(read.missionId, read.role, read.at);
      if (policy === null || read.missionId === null) unattributed++;
      else builder(policy).addRead({ ...read, missionId: read.missionId });
    }
    for (const verdict of verdicts) {
      const policy = verdict.policy ?? attribute(verdict.missionId, null, verdict.at);
      if (policy === null) unattributed++;
      else builder(policy).addVerdict(verdict);
    }
    const policies = [...builders.values()]
      .sort((left, right) => compareText(left.policy, right.policy))
      .map((policy) => policy.finish());
    return {
      events: valid.length,
      analyzedEvents: turns.length + reads.length + verdicts.length - unattributed,
      unattributedEvents: unattributed,
      policies,
      verdictAgreement: agreementOf(policies),
    };
  });
}
