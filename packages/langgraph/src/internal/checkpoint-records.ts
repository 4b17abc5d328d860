/**
 * The JSON shapes the checkpointer stores, and their fail-closed parsing: a stored value that
 * does not have its shape is `corrupt` with its key, never `undefined` or a skipped record.
 */
import { KeelError, type JsonValue } from "@keel/core";
import { z } from "zod";

/** Bytes from LangGraph's serializer: UTF-8 text when the serializer said "json", else base64. */
export const SerializedSchema = z.object({
  type: z.string(),
  encoding: z.enum(["utf8", "base64"]),
  data: z.string(),
});
/** A serialized value as stored. */
export type Serialized = z.infer<typeof SerializedSchema>;

/** A checkpoint document. */
export const CheckpointDocumentSchema = z.object({
  threadId: z.string(),
  namespace: z.string(),
  checkpointId: z.string(),
  parentCheckpointId: z.string().optional(),
  /**
   * The checkpoint and its metadata, serialized at once as `{ checkpoint, metadata }`; the
   * checkpoint's `channel_values` hold only the channels marked `true` in `channels`.
   */
  state: SerializedSchema,
  /**
   * Each channel's value: `true`, in the checkpoint's state (a JSON primitive, a string of at
   * most 1,024 characters); another one inline (its own serialized form: a small one, or one
   * this checkpoint's step changed, up to 256 KiB in all); a larger one, or a large one carried
   * over unchanged from the parent, as the hex digest of its blob (content-addressed, shared
   * between checkpoints); null: empty. Documents of earlier versions (inline only up to 1,024
   * characters) have the same shape.
   */
  channels: z.record(z.string(), z.union([z.literal(true), z.string().regex(/^[0-9a-f]{64}$/), SerializedSchema]).nullable()),
});
/** A checkpoint document's value. */
export type CheckpointDocument = z.infer<typeof CheckpointDocumentSchema>;

/** The head document of a thread and namespace: its latest checkpoint. */
export const HeadDocumentSchema = z.object({ checkpointId: z.string() });

/** One pending write, as a log record's value. */
export const WriteRecordSchema = z.object({
  taskId: z.string(),
  channel: z.string(),
  index: z.number().int(),
  taskPath: z.string(),
  value: SerializedSchema,
});
/** A pending write as stored. */
export type WriteRecord = z.infer<typeof WriteRecordSchema>;

/** Encodes serializer output as JSON. */
export function toSerialized(type: string, bytes: Uint8Array): Serialized {
  if (type === "json") return { type, encoding: "utf8", data: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  return { type, encoding: "base64", data: Buffer.from(bytes).toString("base64") };
}

/** What LangGraph's `JsonPlusSerializer` writes, as the whole text, for a value `JSON.stringify` throws on (a BigInt, a throwing `toJSON`). */
const UNSERIALIZABLE_TEXT = JSON.stringify("[unable to serialize, circular reference is too complex to analyze]");

/** What it writes in place of a reference back to an enclosing object. */
const CIRCULAR_TEXT = JSON.stringify("[Circular]");

/**
 * Why a serialized value is not the value it was made from, or `undefined` when it is (as far as
 * JSON goes): LangGraph's `JsonPlusSerializer` does not fail on what JSON cannot hold but writes
 * a placeholder in its place, or nothing, and the value would come back as that string, or not
 * load at all. Its text is checked (`value` is walked only when the text holds a placeholder).
 * Functions and symbols inside an object are left out, as JSON leaves them out, not refused.
 */
export function unrepresentable(value: unknown, serialized: Serialized): string | undefined {
  if (serialized.type !== "json" || serialized.encoding !== "utf8") return undefined;
  const text = serialized.data;
  if (text === "") return `it serializes to nothing (a ${typeof value}): JSON cannot hold it`;
  if (text === UNSERIALIZABLE_TEXT && typeof value !== "string") {
    return "the serializer could not represent it (a BigInt, or a toJSON that throws, somewhere in it) and would store a placeholder string";
  }
  if (text.includes(CIRCULAR_TEXT) && hasCycle(value)) return 'it refers to itself (a cycle), which the serializer would store as the string "[Circular]"';
  return undefined;
}

/** True when an object reaches one of its own ancestors (as fast-safe-stringify finds cycles: own enumerable keys). */
function hasCycle(value: unknown, ancestors = new Set<object>()): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (ancestors.has(value)) return true;
  ancestors.add(value);
  const children: unknown[] = Array.isArray(value) ? value : Object.keys(value).map((key) => (value as Record<string, unknown>)[key]);
  const found = children.some((child) => hasCycle(child, ancestors));
  ancestors.delete(value);
  return found;
}

/** The serializer's input back: the text itself for "json" (its `loadsTyped` takes a string; no UTF-8 round trip), else the bytes. */
export function fromSerialized(serialized: Serialized): Uint8Array | string {
  return serialized.encoding === "utf8" ? serialized.data : new Uint8Array(Buffer.from(serialized.data, "base64"));
}

/**
 * True when LangGraph's `JsonPlusSerializer` would load `text` as exactly `JSON.parse(text)`:
 * everything it revives (undefined, Set, Map, RegExp, Error, bytes, delta snapshots, LangChain
 * objects) is an object with an `"lc"` key, and the text has no such key, no `\u` escape
 * (which could spell one) and no `"__proto__"` key (which its walk would assign as a prototype).
 * A false answer only means "let the serializer decide".
 */
export function isPlainJsonText(text: string): boolean {
  return !text.includes('"lc"') && !text.includes("\\u") && !text.includes('"__proto__"');
}

/** Parses a stored value with `schema`, or throws `corrupt` naming where it lives. */
export function parseStored<T>(schema: z.ZodType<T>, value: JsonValue, location: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new KeelError("corrupt", `stored LangGraph ${location} does not have its shape: ${parsed.error.issues[0]?.message ?? "unknown"}`, {
    details: { location },
  });
}
