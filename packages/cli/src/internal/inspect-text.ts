/**
 * Text helpers shared by the `inspect`, `skills` and `doctor` output: whatever comes from disk
 * (store documents, SKILL.md frontmatter, paths, error messages) is made printable first, so a
 * stored value can never steer the terminal or break a line of the tree.
 */

// C0 controls, DEL and C1 controls; also the line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** Replaces control characters with visible escapes (`\n`, `\t`, `\u001b`). Pure. */
export function printable(text: string): string {
  return text.replace(CONTROL, (character) => {
    if (character === "\n") return "\\n";
    if (character === "\r") return "\\r";
    if (character === "\t") return "\\t";
    return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/** {@link printable}, then cut to `max` characters with an ellipsis. Pure. */
export function shortText(text: string, max: number): string {
  const clean = printable(text);
  return clean.length <= max ? clean : `${clean.slice(0, Math.max(0, max - 1))}…`;
}

/** An integer with thousands separators (`12,345`). Pure. */
export function formatCount(value: number): string {
  return value.toLocaleString("en-US");
}

/** `1 turn`, `2 turns`. Pure. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${formatCount(count)} ${count === 1 ? singular : pluralForm}`;
}

/** Epoch milliseconds as ISO 8601, or `?` for a value that is not a valid time. Pure. */
export function isoTime(epochMs: number): string {
  const date = new Date(epochMs);
  return Number.isNaN(date.getTime()) ? "?" : date.toISOString();
}
