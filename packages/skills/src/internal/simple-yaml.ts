/**
 * A fast path for the YAML that nearly every SKILL.md frontmatter uses: top-level `key: value`
 * lines with plain or simply quoted string values, and one level of `key:` + indented
 * `sub: value` lines (for `metadata`). It parses only what it is sure the `yaml` package would
 * read the same way, and answers `undefined` for anything else, so that the caller falls back to
 * the full parser. A property test holds it to that promise.
 *
 * Kept for speed: it serves skills discovery at ≥ 3× pi (bench/skills.bench.ts: cold resolve
 * 4.9× pi with it, 1.7× without, the `yaml` package then most of the time; bench/README.md).
 */

const KEY_LINE = /^([A-Za-z][A-Za-z0-9_-]*):( .*)?$/;
/** Characters that give a plain scalar another meaning when they come first. */
const INDICATORS = new Set(["-", "?", ":", ",", "[", "]", "{", "}", "#", "&", "*", "!", "|", ">", "'", '"', "%", "@", "`"]);
/** Values the YAML core schema reads as something other than a string (numbers, booleans, null). */
const NON_STRING_START = /^[+.0-9]/;
const NON_STRING_WORD = /^(?:~|null|true|false)$/i;
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;
const DOUBLE_QUOTED = /^"[^"\\]*"$/;
const SINGLE_QUOTED = /^'[^']*'$/;

/** A string value, or `undefined` when `raw` is outside the simple subset. */
function scalar(raw: string): string | undefined {
  if (UNPRINTABLE.test(raw)) return undefined;
  if (DOUBLE_QUOTED.test(raw) || SINGLE_QUOTED.test(raw)) return raw.slice(1, -1);
  const first = raw[0];
  if (first === undefined || INDICATORS.has(first)) return undefined;
  if (raw.includes(": ") || raw.includes(" #") || raw.endsWith(":")) return undefined;
  if (NON_STRING_START.test(raw) || NON_STRING_WORD.test(raw)) return undefined;
  return raw;
}

/**
 * Parses `text` when it is in the simple subset; `undefined` otherwise (use the full parser).
 * Never throws.
 */
export function parseSimpleYaml(text: string): Record<string, unknown> | undefined {
  if (text.includes("\t") || text.includes("\r")) return undefined;
  const result: Record<string, unknown> = {};
  let keys = 0;
  let openKey: string | undefined;
  let nested: Record<string, string> | undefined;
  let nestedIndent = 0;
  for (const line of text.split("\n")) {
    const trimmed = line.trimStart();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const indent = line.length - trimmed.length;
    if (indent === 0) {
      openKey = undefined;
      nested = undefined;
      const match = KEY_LINE.exec(line);
      if (!match) return undefined;
      const key = match[1] as string;
      if (Object.hasOwn(result, key) || key === "__proto__") return undefined;
      keys++;
      const raw = (match[2] ?? "").trim();
      if (raw === "") {
        result[key] = null;
        openKey = key;
        continue;
      }
      const value = scalar(raw);
      if (value === undefined) return undefined;
      result[key] = value;
      continue;
    }
    if (openKey === undefined) return undefined;
    if (nested === undefined) {
      nested = {};
      nestedIndent = indent;
      result[openKey] = nested;
    } else if (indent !== nestedIndent) {
      return undefined;
    }
    const match = KEY_LINE.exec(trimmed);
    if (!match) return undefined;
    const key = match[1] as string;
    if (Object.hasOwn(nested, key) || key === "__proto__") return undefined;
    const value = scalar((match[2] ?? "").trim());
    if (value === undefined) return undefined;
    nested[key] = value;
  }
  return keys === 0 ? undefined : result;
}
