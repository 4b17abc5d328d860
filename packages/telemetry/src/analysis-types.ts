import type { SessionAction } from "@keel/core";
import { z } from "zod";

/** Turns counted by session action. */
export interface ActionCounts {
  fresh: number;
  resumed: number;
  rotated: number;
}

/** One role turn, as a point of a per-policy series (for charts). */
export interface TurnPoint {
  /** 1-based position among the policy's turns, in time order (`at`, then mission, role, turn). */
  index: number;
  /** When the turn ended, epoch ms. */
  at: number;
  missionId: string;
  role: string;
  /** The role's own turn number in its mission. */
  turn: number;
  /** Bytes of the prompt sent. */
  promptBytes: number;
  /** Observed input tokens (`totalInputTokens(usage)`), or `null` when the backend reported none. */
  inputTokens: number | null;
  action: SessionAction;
  /** Why the action was chosen (`first_turn`, `max_turns`, …). */
  rotationReason: string;
}

/** A path that one role read more than once in one mission. */
export interface RepeatedRead {
  missionId: string;
  role: string;
  path: string;
  /** How many times it was read (at least 2). */
  reads: number;
}

/** The numbers of one role under one policy. */
export interface RoleAnalysis {
  role: string;
  turns: number;
  actions: ActionCounts;
  /** Rotated turns by reason. */
  rotations: Record<string, number>;
  promptBytes: number;
  /** Sum of observed input tokens over the turns that reported usage. */
  inputTokens: number;
  /** Turns whose backend reported no input tokens (not counted in `inputTokens`). */
  turnsWithoutUsage: number;
  /** `agent.io.read` events. */
  reads: number;
  /** Reads of a path this role had already read in the same mission. */
  repeatedReads: number;
}

/** One reviewer verdict. */
export interface RoundVerdict {
  missionId: string;
  round: number;
  verdict: string;
  /** As reported by the `round.review.completed` event. */
  reviewerPromptBytes: number;
  at: number;
}

/** The numbers of one session policy (all its missions). */
export interface PolicyAnalysis {
  /** The effective policy (`fresh`, `mission`, `rolling`, …). */
  policy: string;
  /** Mission ids seen under this policy, sorted. */
  missions: string[];
  turns: number;
  actions: ActionCounts;
  /** Rotated turns by reason. */
  rotations: Record<string, number>;
  /** Turns where a resume failed and the turn was retried fresh. */
  resumeFailures: number;
  /** Prompt bytes over every role. */
  promptBytes: number;
  /** Prompt bytes of the turns of the reviewer role (role named `reviewer`, any case). */
  reviewerPromptBytes: number;
  /** Observed input tokens over the turns that reported usage. */
  inputTokens: number;
  /** Turns whose backend reported no input tokens. */
  turnsWithoutUsage: number;
  /** `agent.io.read` events. */
  reads: number;
  /** Reads of a path already read by the same role in the same mission. */
  repeatedReads: number;
  /** The paths behind `repeatedReads`, most-read first. */
  repeatedReadPaths: RepeatedRead[];
  /** Per role, sorted by role name. */
  roles: RoleAnalysis[];
  /** Every turn, in time order. */
  series: TurnPoint[];
  /** Reviewer verdicts, by round then time. */
  verdicts: RoundVerdict[];
}

/** The verdicts of one round number under several policies. */
export interface RoundAgreement {
  round: number;
  /** The verdict per policy (the latest for that round under that policy). */
  verdicts: Record<string, string>;
  /** True when every policy's verdict is the same (compared trimmed and case-insensitively). */
  agree: boolean;
}

/** Reviewer verdict agreement across policies on rounds matched by round number. */
export interface VerdictAgreement {
  /** Rounds that at least two policies reviewed. */
  matchedRounds: number;
  /** Matched rounds on which all those policies agree. */
  agreeingRounds: number;
  /** The matched rounds, by round number. */
  rounds: RoundAgreement[];
}

/** What {@link analyzeEvents} returns: plain data, safe to serialize. */
export interface EventAnalysis {
  /** Events given. */
  events: number;
  /** Events of the types the analysis reads (turns, reads, verdicts) that were attributed to a policy. */
  analyzedEvents: number;
  /**
   * Reads and verdicts that could not be attributed to a policy: no mission id, or a mission with
   * no `role.session.turn` (and, for verdicts, no `policy` field).
   */
  unattributedEvents: number;
  /** Per policy, sorted by policy name. */
  policies: PolicyAnalysis[];
  verdictAgreement: VerdictAgreement;
}

const count = z.number().int().nonnegative();
const ActionCountsSchema = z.strictObject({ fresh: count, resumed: count, rotated: count });
const ReasonCountsSchema = z.record(z.string(), count);

const TurnPointSchema = z.strictObject({
  index: z.number().int().positive(),
  at: z.number().finite(),
  missionId: z.string(),
  role: z.string(),
  turn: count,
  promptBytes: count,
  inputTokens: count.nullable(),
  action: z.enum(["fresh", "resumed", "rotated"]),
  rotationReason: z.string(),
});

const RoleAnalysisSchema = z.strictObject({
  role: z.string(),
  turns: count,
  actions: ActionCountsSchema,
  rotations: ReasonCountsSchema,
  promptBytes: count,
  inputTokens: count,
  turnsWithoutUsage: count,
  reads: count,
  repeatedReads: count,
});

const RoundVerdictSchema = z.strictObject({
  missionId: z.string(),
  round: count,
  verdict: z.string(),
  reviewerPromptBytes: count,
  at: z.number().finite(),
});

const PolicyAnalysisSchema = z.strictObject({
  policy: z.string(),
  missions: z.array(z.string()),
  turns: count,
  actions: ActionCountsSchema,
  rotations: ReasonCountsSchema,
  resumeFailures: count,
  promptBytes: count,
  reviewerPromptBytes: count,
  inputTokens: count,
  turnsWithoutUsage: count,
  reads: count,
  repeatedReads: count,
  repeatedReadPaths: z.array(
    z.strictObject({ missionId: z.string(), role: z.string(), path: z.string(), reads: z.number().int().min(2) }),
  ),
  roles: z.array(RoleAnalysisSchema),
  series: z.array(TurnPointSchema),
  verdicts: z.array(RoundVerdictSchema),
});

/** zod schema of an {@link EventAnalysis} (for an analysis read back from JSON). */
export const EventAnalysisSchema: z.ZodType<EventAnalysis> = z.strictObject({
  events: count,
  analyzedEvents: count,
  unattributedEvents: count,
  policies: z.array(PolicyAnalysisSchema),
  verdictAgreement: z.strictObject({
    matchedRounds: count,
    agreeingRounds: count,
    rounds: z.array(
      z.strictObject({ round: count, verdicts: z.record(z.string(), z.string()), agree: z.boolean() }),
    ),
  }),
});
