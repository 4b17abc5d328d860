import type { EventAnalysis, PolicyAnalysis } from "../analysis-types.js";
import { formatCount, formatReasons, plural } from "./format.js";

/** `a`, `a and b`, `a, b and c`. */
export function listNames(names: readonly string[]): string {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1] ?? ""}`;
}

/** How much smaller `low` is than `high`, as `64% fewer`-ready text (`<1%` when it rounds to 0). */
export function percentLess(low: number, high: number): string {
  if (!(high > 0)) return "0%";
  const percent = Math.round((1 - low / high) * 100);
  return percent === 0 && low < high ? "<1%" : `${percent}%`;
}

interface Measure {
  policy: string;
  value: number;
}

/** The policies with the lowest and the highest value (ties kept, names in analysis order). */
function extremes(measures: readonly Measure[]): { low: Measure[]; high: Measure[] } {
  const values = measures.map((measure) => measure.value);
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { low: measures.filter((m) => m.value === min), high: measures.filter((m) => m.value === max) };
}

const names = (measures: readonly Measure[]): string => listNames(measures.map((measure) => measure.policy));

/**
 * One sentence comparing a measure across policies: who has the least, by how much against the
 * most; or that they are all equal.
 */
function compare(label: string, measures: readonly Measure[], verb: string, format: (value: number) => string): string {
  const { low, high } = extremes(measures);
  const least = low[0]?.value ?? 0;
  const most = high[0]?.value ?? 0;
  if (least === most) return `${label}: every policy ${verb} the same (${format(least)}).`;
  const each = low.length > 1 ? " each" : "";
  return `${label}: ${names(low)} ${verb} the fewest, ${format(least)}${each}, ${percentLess(least, most)} fewer than ${names(high)} (${format(most)}).`;
}

function tokensSentence(policies: readonly PolicyAnalysis[]): string {
  const measured = policies.filter((policy) => policy.turns > policy.turnsWithoutUsage);
  if (measured.length === 0) return "Input tokens: no backend reported usage, so they cannot be compared.";
  const unmeasured = policies.filter((policy) => !measured.includes(policy)).map((policy) => policy.policy);
  const missing = policies.reduce((total, policy) => total + policy.turnsWithoutUsage, 0);
  const note =
    (unmeasured.length > 0 ? ` ${listNames(unmeasured)} reported no usage and ${unmeasured.length === 1 ? "is" : "are"} left out.` : "") +
    (missing > 0 && unmeasured.length === 0 ? ` ${plural(missing, "turn")} without usage ${missing === 1 ? "is" : "are"} left out.` : "");
  if (measured.length === 1) {
    const only = measured[0] as PolicyAnalysis;
    return `Input tokens: only ${only.policy} reported usage (${formatCount(only.inputTokens)}).${note}`;
  }
  const sameTurns = measured.every((policy) => policy.turns - policy.turnsWithoutUsage === (measured[0]?.turns ?? 0) - (measured[0]?.turnsWithoutUsage ?? 0));
  if (sameTurns) {
    const totals = measured.map((policy) => ({ policy: policy.policy, value: policy.inputTokens }));
    return compare("Input tokens", totals, "used", formatCount) + note;
  }
  // Different numbers of measured turns: compare the mean per turn, not the totals.
  const means = measured.map((policy) => ({ policy: policy.policy, value: Math.round(policy.inputTokens / (policy.turns - policy.turnsWithoutUsage)) }));
  return compare("Input tokens per turn", means, "used", (value) => `${formatCount(value)} on average`) + note;
}

function promptBytesSentence(policies: readonly PolicyAnalysis[]): string {
  const sameTurns = policies.every((policy) => policy.turns === policies[0]?.turns);
  if (sameTurns) return compare("Prompt bytes", policies.map((policy) => ({ policy: policy.policy, value: policy.promptBytes })), "sent", formatCount);
  const means = policies.filter((policy) => policy.turns > 0).map((policy) => ({ policy: policy.policy, value: Math.round(policy.promptBytes / policy.turns) }));
  return compare("Prompt bytes per turn", means, "sent", (value) => `${formatCount(value)} on average`);
}

function sessionsSentence(policies: readonly PolicyAnalysis[]): string {
  const parts: string[] = [];
  // Only a role that ran again can have started afresh by choice: a first turn always does.
  const everyTurnFresh = policies
    .filter((policy) => policy.roles.some((role) => role.turns > 1) && policy.actions.fresh === policy.turns)
    .map((policy) => policy.policy);
  if (everyTurnFresh.length > 0) parts.push(`${listNames(everyTurnFresh)} started a new session on every turn`);
  const rotating = policies.filter((policy) => policy.actions.rotated > 0);
  for (const policy of rotating) {
    parts.push(`${policy.policy} rotated ${policy.actions.rotated === 1 ? "once" : `${formatCount(policy.actions.rotated)} times`} (${formatReasons(policy.rotations)})`);
  }
  const never = policies.filter((policy) => policy.actions.rotated === 0 && !everyTurnFresh.includes(policy.policy)).map((policy) => policy.policy);
  if (never.length > 0) parts.push(`${listNames(never)} never rotated`);
  const failures = policies.filter((policy) => policy.resumeFailures > 0);
  for (const policy of failures) parts.push(`${policy.policy} failed to resume ${plural(policy.resumeFailures, "time")}`);
  return `Sessions: ${parts.join("; ")}.`;
}

function readsSentence(policies: readonly PolicyAnalysis[]): string | undefined {
  const measures = policies.map((policy) => ({ policy: policy.policy, value: policy.repeatedReads }));
  const { low, high } = extremes(measures);
  const least = low[0]?.value ?? 0;
  const most = high[0]?.value ?? 0;
  if (most === 0 || least === most) return undefined;
  return `Repeated reads: ${names(high)} read a file it had already read ${plural(most, "time")}, against ${formatCount(least)} under ${names(low)}.`;
}

function verdictsSentence(analysis: EventAnalysis): string {
  const { matchedRounds, agreeingRounds, rounds } = analysis.verdictAgreement;
  if (matchedRounds === 0) return "Verdicts: no round was reviewed under two or more policies, so they cannot be compared.";
  if (agreeingRounds === matchedRounds) {
    const all = matchedRounds === 1 ? "the one matched round" : `all ${formatCount(matchedRounds)} matched rounds`;
    return `Verdicts: the reviewer gave the same verdict under every policy on ${all}, so the policy did not change what it concluded.`;
  }
  const differing = rounds.filter((round) => !round.agree).map((round) => String(round.round));
  return (
    `Verdicts: the reviewer's verdict differed between policies on ${formatCount(differing.length)} of ${plural(matchedRounds, "matched round")} ` +
    `(round${differing.length === 1 ? "" : "s"} ${listNames(differing)}), so the policy changed what it concluded.`
  );
}

/**
 * The report's headline: one paragraph, computed from the analysis, of what the comparison
 * shows: which policy used the fewest input tokens and sent the fewest prompt bytes (by how much
 * against the most; per turn when the policies ran different numbers of turns), how each policy
 * handled its sessions (rotations and their reasons), repeated reads, and whether the reviewer's
 * verdicts agree across policies. Plain text, not escaped.
 */
export function headlineOf(analysis: EventAnalysis): string {
  const policies = analysis.policies.filter((policy) => policy.turns > 0);
  const turns = policies.reduce((total, policy) => total + policy.turns, 0);
  if (policies.length === 0) return "No role turns were recorded, so there is nothing to compare.";
  if (policies.length === 1) {
    const only = policies[0] as PolicyAnalysis;
    return (
      `One policy was recorded, ${only.policy}: ${plural(only.turns, "turn")}, ${formatCount(only.promptBytes)} prompt bytes, ` +
      `${formatCount(only.inputTokens)} input tokens, ${plural(only.actions.rotated, "rotation")}. Run a second policy to compare.`
    );
  }
  return [
    `${plural(policies.length, "policy", "policies")} compared over ${plural(turns, "turn")}.`.replace(/^./, (first) => first.toUpperCase()),
    tokensSentence(policies),
    promptBytesSentence(policies),
    sessionsSentence(policies),
    readsSentence(policies),
    verdictsSentence(analysis),
  ]
    .filter((sentence): sentence is string => sentence !== undefined)
    .join(" ");
}
