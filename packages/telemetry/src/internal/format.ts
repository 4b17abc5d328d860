/** Escapes text for HTML element content and attribute values (both quote kinds). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** Replaces control characters (terminal escapes included) so event text cannot steer a terminal. */
export function sanitizeText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "\uFFFD");
}

/** A count with thousands separators (`12,345`), locale-free. */
export function formatCount(value: number): string {
  const [whole = "0", fraction] = String(Math.round(value * 100) / 100).split(".");
  const negative = whole.startsWith("-");
  const digits = negative ? whole.slice(1) : whole;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${negative ? "-" : ""}${grouped}${fraction === undefined ? "" : `.${fraction}`}`;
}

/** The action counts as `fresh/resumed/rotated`. */
export function formatActions(actions: { fresh: number; resumed: number; rotated: number }): string {
  return `${actions.fresh}/${actions.resumed}/${actions.rotated}`;
}

/** Verdicts summarised as `approve 2, revise 1` (most frequent first), or `-` when none. */
export function formatVerdicts(verdicts: readonly { verdict: string }[]): string {
  if (verdicts.length === 0) return "-";
  const counts = new Map<string, number>();
  for (const { verdict } of verdicts) counts.set(verdict, (counts.get(verdict) ?? 0) + 1);
  return [...counts]
    .sort(([leftName, left], [rightName, right]) => right - left || (leftName < rightName ? -1 : leftName > rightName ? 1 : 0))
    .map(([verdict, count]) => `${verdict} ${count}`)
    .join(", ");
}

/** Rotations by reason as `max_turns 2, model_changed 1`, or `-` when none. */
export function formatReasons(reasons: Record<string, number>): string {
  const entries = Object.entries(reasons).filter(([, count]) => count > 0);
  return entries.length === 0 ? "-" : entries.map(([reason, count]) => `${reason} ${count}`).join(", ");
}

/** `1 turn`, `2 turns`, with thousands separators. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

/** The counting cells of a policy's row in both reports: turns, actions, prompt bytes (all, reviewer), input tokens, repeated reads. */
export function policyCountCells(policy: { turns: number; actions: { fresh: number; resumed: number; rotated: number }; promptBytes: number; reviewerPromptBytes: number; inputTokens: number; repeatedReads: number }): string[] {
  return [
    formatCount(policy.turns),
    formatActions(policy.actions),
    formatCount(policy.promptBytes),
    formatCount(policy.reviewerPromptBytes),
    formatCount(policy.inputTokens),
    formatCount(policy.repeatedReads),
  ];
}

/** The counting cells of a role's row in both reports: turns, actions, prompt bytes, input tokens, reads, repeated reads. */
export function roleCountCells(role: { turns: number; actions: { fresh: number; resumed: number; rotated: number }; promptBytes: number; inputTokens: number; reads: number; repeatedReads: number }): string[] {
  return [
    formatCount(role.turns),
    formatActions(role.actions),
    formatCount(role.promptBytes),
    formatCount(role.inputTokens),
    formatCount(role.reads),
    formatCount(role.repeatedReads),
  ];
}
