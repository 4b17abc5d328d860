/**
 * Content parts of the AI SDK and content blocks of a Keel transcript (pi's shapes), one part at a
 * time. A mapping renames keys in place, so the key order of a part survives the trip both ways;
 * a part that has no faithful pi block is kept as it is, its `type` prefixed with
 * {@link ESCAPED_TYPE_PREFIX} when it would otherwise pass for a pi block.
 */

/** A plain JSON object (what every part and block is once stored). */
export type JsonRecord = Record<string, unknown>;

/** The prefix that marks an AI SDK part kept verbatim under a pi block type (`ai-sdk:image`). */
export const ESCAPED_TYPE_PREFIX = "ai-sdk:";

/** The block types pi (and so the transcript's schemas) gives a meaning to. */
const PI_BLOCK_TYPES: ReadonlySet<string> = new Set(["text", "image", "thinking", "toolCall"]);

/** Keys pi writes on its blocks that the AI SDK has no use for (dropped when reading a pi-native block). */
const PI_ONLY_BLOCK_KEYS: Readonly<Record<string, readonly string[]>> = {
  text: ["textSignature"],
  thinking: ["thinkingSignature", "redacted"],
  toolCall: ["thoughtSignature"],
  image: [],
};

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Renames keys of `source` in place of the originals (`renames[from] = to`), setting `type` to
 * `type`; `undefined` when a target key already exists beside its source (the mapping would not
 * be reversible).
 */
function renameInPlace(source: JsonRecord, type: string, renames: Readonly<Record<string, string>>): JsonRecord | undefined {
  const targets = new Set(Object.values(renames));
  for (const key of Object.keys(source)) if (targets.has(key) && !(key in renames)) return undefined;
  const out: JsonRecord = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === "type") out.type = type;
    else out[renames[key] ?? key] = value;
  }
  return out;
}

/** The part kept verbatim, escaped when its type is one pi knows (or already escaped). */
export function keepVerbatim(part: JsonRecord): JsonRecord {
  const type = typeof part.type === "string" ? part.type : "";
  if (!PI_BLOCK_TYPES.has(type) && !type.startsWith(ESCAPED_TYPE_PREFIX)) return part;
  return { ...part, type: ESCAPED_TYPE_PREFIX + type };
}

/** A string the AI SDK reads as a URL (it tries `new URL(…)` on string data the same way). */
function isUrlString(value: string): boolean {
  return URL.canParse(value);
}

/**
 * One AI SDK content part (of a user or assistant message, or of a `content` tool output) as a pi
 * block: `text` as it is, `reasoning` as `thinking`, `tool-call` (object input) as `toolCall`,
 * an inline base64 `image` with its media type as `image`; anything else verbatim (see
 * {@link keepVerbatim}) — a file, an image by URL, a provider-executed tool result.
 */
export function partToBlock(part: JsonRecord): JsonRecord {
  switch (part.type) {
    case "text":
      return typeof part.text === "string" ? part : keepVerbatim(part);
    case "reasoning":
      return (typeof part.text === "string" && renameInPlace(part, "thinking", { text: "thinking" })) || keepVerbatim(part);
    case "tool-call":
      if (typeof part.toolCallId !== "string" || typeof part.toolName !== "string" || !isRecord(part.input)) return keepVerbatim(part);
      return renameInPlace(part, "toolCall", { toolCallId: "id", toolName: "name", input: "arguments" }) ?? keepVerbatim(part);
    case "image":
      if (typeof part.image !== "string" || isUrlString(part.image) || typeof part.mediaType !== "string") return keepVerbatim(part);
      return renameInPlace(part, "image", { image: "data", mediaType: "mimeType" }) ?? keepVerbatim(part);
    default:
      return keepVerbatim(part);
  }
}

/**
 * One pi block as an AI SDK part: the reverse of {@link partToBlock}. With `keep` false (a block
 * pi wrote), pi's own fields (signatures) are dropped and a redacted thinking block is left out
 * (`undefined`).
 */
export function blockToPart(block: JsonRecord, keep: boolean): JsonRecord | undefined {
  const type = typeof block.type === "string" ? block.type : "";
  if (type.startsWith(ESCAPED_TYPE_PREFIX)) return { ...block, type: type.slice(ESCAPED_TYPE_PREFIX.length) };
  if (!PI_BLOCK_TYPES.has(type)) return block;
  if (!keep && type === "thinking" && block.redacted === true) return undefined;
  const source = keep ? block : withoutKeys(block, PI_ONLY_BLOCK_KEYS[type] ?? []);
  switch (type) {
    case "thinking":
      return renameInPlace(source, "reasoning", { thinking: "text" }) ?? source;
    case "toolCall":
      return renameInPlace(source, "tool-call", { id: "toolCallId", name: "toolName", arguments: "input" }) ?? source;
    case "image":
      return renameInPlace(source, "image", { data: "image", mimeType: "mediaType" }) ?? source;
    default:
      return source;
  }
}

/** A copy of `record` without `keys` (the order of the rest kept). */
export function withoutKeys(record: JsonRecord, keys: readonly string[]): JsonRecord {
  if (!keys.some((key) => key in record)) return record;
  const out: JsonRecord = {};
  for (const [key, value] of Object.entries(record)) if (!keys.includes(key)) out[key] = value;
  return out;
}
