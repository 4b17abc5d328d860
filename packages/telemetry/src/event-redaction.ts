import { canonicalJson, digest, utf8Bytes, type JsonValue } from "@keel/core";

/**
 * Field names that carry text content (prompts, model output, file or source text). Matched
 * case-insensitively, as the whole field name or as its last camelCase word (`systemPrompt`,
 * `decisiveOutput`, `fileContent`), at any depth of an event. Numbers, booleans and `null` under
 * these names are left alone (`usage.output` is a token count, not content).
 */
export const CONTENT_FIELD_NAMES: readonly string[] = [
  "prompt",
  "prompts",
  "text",
  "content",
  "contents",
  "output",
  "body",
  "source",
  "transcript",
  "messages",
  "stdout",
  "stderr",
  "diff",
  "patch",
];

const CONTENT_NAMES = new Set(CONTENT_FIELD_NAMES);

/** What replaces a content field when content is not included. */
export interface RedactedContent {
  /** Always `true`: marks a value that was replaced. */
  redacted: true;
  /** `digest` of the original value (`"sha256:<hex>"` of its canonical JSON). */
  digest: string;
  /** UTF-8 byte length of the original: of the string itself, or of the canonical JSON of anything else. */
  bytes: number;
}

/** True when a field of that name carries text content (see {@link CONTENT_FIELD_NAMES}). */
export function isContentField(name: string): boolean {
  if (CONTENT_NAMES.has(name.toLowerCase())) return true;
  const lastWord = /[a-z0-9]([A-Z][a-z0-9]*)$/.exec(name);
  return lastWord?.[1] !== undefined && CONTENT_NAMES.has(lastWord[1].toLowerCase());
}

/** The {@link RedactedContent} stand-in of one value. */
export function redactValue(value: JsonValue): RedactedContent {
  const bytes = typeof value === "string" ? utf8Bytes(value) : utf8Bytes(canonicalJson(value));
  return { redacted: true, digest: digest(value), bytes };
}

/** True when a value already is a {@link RedactedContent} (so redacting twice changes nothing). */
export function isRedactedContent(value: unknown): value is RedactedContent {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return (
    Object.keys(record).length === 3 &&
    record["redacted"] === true &&
    typeof record["digest"] === "string" &&
    typeof record["bytes"] === "number"
  );
}

function redactNode(node: JsonValue): JsonValue {
  if (Array.isArray(node)) return node.map(redactNode);
  if (node === null || typeof node !== "object") return node;
  const copy: { [key: string]: JsonValue } = {};
  for (const [key, value] of Object.entries(node)) {
    const replace =
      isContentField(key) &&
      value !== null &&
      (typeof value === "string" || typeof value === "object") &&
      !isRedactedContent(value);
    copy[key] = replace ? (redactValue(value) as unknown as JsonValue) : redactNode(value);
  }
  return copy;
}

/**
 * Returns a copy of a plain JSON event in which every content field (see
 * {@link CONTENT_FIELD_NAMES}) holding a string, array or object is replaced by a
 * {@link RedactedContent} — its digest and byte length — so no raw prompt or source text is
 * recorded. The event's `type` and `at` are never touched. Idempotent (a stand-in is kept as it
 * is) and pure: the input is not changed.
 */
export function redactEvent<T extends { type: string; at: number }>(event: T): T {
  const copy = redactNode(event as unknown as JsonValue) as unknown as T;
  return { ...copy, type: event.type, at: event.at };
}
