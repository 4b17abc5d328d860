import { totalInputTokens, type AgentIoEvent, type RoleSessionTurnEvent, type RoundReviewCompletedEvent } from "@keel/core";
import type { ActionCounts, PolicyAnalysis, RepeatedRead, RoleAnalysis, RoundVerdict, TurnPoint } from "../analysis-types.js";
import { compareText } from "./analysis-attribution.js";

/** True for the reviewer role, whatever its case. */
export function isReviewerRole(role: string): boolean {
  return role.toLowerCase() === "reviewer";
}

interface RoleTotals {
  turns: number;
  actions: ActionCounts;
  rotations: Map<string, number>;
  promptBytes: number;
  inputTokens: number;
  turnsWithoutUsage: number;
  reads: number;
}

const emptyTotals = (): RoleTotals => ({
  turns: 0,
  actions: { fresh: 0, resumed: 0, rotated: 0 },
  rotations: new Map(),
  promptBytes: 0,
  inputTokens: 0,
  turnsWithoutUsage: 0,
  reads: 0,
});

type TurnInput = Omit<TurnPoint, "index">;

const compareTurns = (left: TurnInput, right: TurnInput): number =>
  left.at - right.at ||
  compareText(left.missionId, right.missionId) ||
  compareText(left.role, right.role) ||
  left.turn - right.turn ||
  compareText(left.action, right.action) ||
  compareText(left.rotationReason, right.rotationReason) ||
  left.promptBytes - right.promptBytes ||
  (left.inputTokens ?? -1) - (right.inputTokens ?? -1);

const compareVerdicts = (left: RoundVerdict, right: RoundVerdict): number =>
  left.round - right.round ||
  left.at - right.at ||
  compareText(left.missionId, right.missionId) ||
  compareText(left.verdict, right.verdict) ||
  left.reviewerPromptBytes - right.reviewerPromptBytes;

const sortedRecord = (counts: Map<string, number>): Record<string, number> =>
  Object.fromEntries([...counts].sort(([left], [right]) => compareText(left, right)));

const addCounts = (into: Map<string, number>, from: Map<string, number>): void => {
  for (const [key, value] of from) into.set(key, (into.get(key) ?? 0) + value);
};

/** Accumulates one policy's events; {@link PolicyBuilder.finish} gives its plain-data analysis. */
export class PolicyBuilder {
  private readonly roles = new Map<string, RoleTotals>();
  private readonly missions = new Set<string>();
  private readonly turns: TurnInput[] = [];
  private readonly reads = new Map<string, RepeatedRead>();
  private readonly verdicts: RoundVerdict[] = [];
  private resumeFailures = 0;

  constructor(readonly policy: string) {}

  private role(role: string): RoleTotals {
    let totals = this.roles.get(role);
    if (!totals) {
      totals = emptyTotals();
      this.roles.set(role, totals);
    }
    return totals;
  }

  addTurn(event: RoleSessionTurnEvent): void {
    const totals = this.role(event.role);
    const inputTokens = totalInputTokens(event.usage);
    totals.turns++;
    totals.actions[event.action]++;
    if (event.action === "rotated") totals.rotations.set(event.rotationReason, (totals.rotations.get(event.rotationReason) ?? 0) + 1);
    totals.promptBytes += event.promptBytes;
    if (inputTokens === null) totals.turnsWithoutUsage++;
    else totals.inputTokens += inputTokens;
    if (event.resumeFailed === true) this.resumeFailures++;
    this.missions.add(event.missionId);
    this.turns.push({
      at: event.at,
      missionId: event.missionId,
      role: event.role,
      turn: event.turn,
      promptBytes: event.promptBytes,
      inputTokens,
      action: event.action,
      rotationReason: event.rotationReason,
    });
  }

  addRead(event: AgentIoEvent<"agent.io.read"> & { missionId: string }): void {
    this.role(event.role).reads++;
    this.missions.add(event.missionId);
    const key = JSON.stringify([event.missionId, event.role, event.path]);
    const seen = this.reads.get(key);
    if (seen) seen.reads++;
    else this.reads.set(key, { missionId: event.missionId, role: event.role, path: event.path, reads: 1 });
  }

  addVerdict(event: RoundReviewCompletedEvent): void {
    this.missions.add(event.missionId);
    this.verdicts.push({
      missionId: event.missionId,
      round: event.round,
      verdict: event.verdict,
      reviewerPromptBytes: event.reviewerPromptBytes,
      at: event.at,
    });
  }

  finish(): PolicyAnalysis {
    const repeatedByRole = new Map<string, number>();
    const repeatedReadPaths: RepeatedRead[] = [];
    for (const read of this.reads.values()) {
      if (read.reads < 2) continue;
      repeatedReadPaths.push({ ...read });
      repeatedByRole.set(read.role, (repeatedByRole.get(read.role) ?? 0) + read.reads - 1);
    }
    repeatedReadPaths.sort(
      (left, right) =>
        right.reads - left.reads ||
        compareText(left.missionId, right.missionId) ||
        compareText(left.role, right.role) ||
        compareText(left.path, right.path),
    );
    const roles: RoleAnalysis[] = [...this.roles]
      .sort(([left], [right]) => compareText(left, right))
      .map(([role, totals]) => ({
        role,
        turns: totals.turns,
        actions: { ...totals.actions },
        rotations: sortedRecord(totals.rotations),
        promptBytes: totals.promptBytes,
        inputTokens: totals.inputTokens,
        turnsWithoutUsage: totals.turnsWithoutUsage,
        reads: totals.reads,
        repeatedReads: repeatedByRole.get(role) ?? 0,
      }));
    const sum = (pick: (role: RoleAnalysis) => number, only?: (role: RoleAnalysis) => boolean) =>
      roles.filter(only ?? (() => true)).reduce((total, role) => total + pick(role), 0);
    const rotations = new Map<string, number>();
    for (const totals of this.roles.values()) addCounts(rotations, totals.rotations);
    return {
      policy: this.policy,
      missions: [...this.missions].sort(compareText),
      turns: sum((role) => role.turns),
      actions: {
        fresh: sum((role) => role.actions.fresh),
        resumed: sum((role) => role.actions.resumed),
        rotated: sum((role) => role.actions.rotated),
      },
      rotations: sortedRecord(rotations),
      resumeFailures: this.resumeFailures,
      promptBytes: sum((role) => role.promptBytes),
      reviewerPromptBytes: sum((role) => role.promptBytes, (role) => isReviewerRole(role.role)),
      inputTokens: sum((role) => role.inputTokens),
      turnsWithoutUsage: sum((role) => role.turnsWithoutUsage),
      reads: sum((role) => role.reads),
      repeatedReads: sum((role) => role.repeatedReads),
      repeatedReadPaths,
      roles,
      series: [...this.turns].sort(compareTurns).map((turn, position) => ({ index: position + 1, ...turn })),
      verdicts: [...this.verdicts].sort(compareVerdicts),
    };
  }
}
