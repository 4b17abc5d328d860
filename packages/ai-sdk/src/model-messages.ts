import { KeelError, validate } from "@keel/core";
import { parseEntry, type TranscriptContext, type TranscriptEntry, type TranscriptEntryInput, type TranscriptMessage } from "@keel/transcript";
import type { ModelMessage } from "ai";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { MARKER_KEY, markSplit, messageToPi, piToMessages } from "./internal/message-convert.js";
import { isRecord, type JsonRecord } from "./internal/message-parts.js";

/** Any array: its messages are checked one by one after, stopping at the first bad one (a huge array of bad items is one issue, not millions). */
const MessageListSchema = z.array(z.unknown());

const ModelMessageSchema = z.looseObject({
  role: z.union([z.literal("system"), z.literal("user"), z.literal("assistant"), z.literal("tool")]),
  content: z.union([z.string(), z.array(z.unknown())]),
});

/** An item kept as it is (not copied: a copy would drop an own `__proto__` key, and the round trip is byte-faithful). */
const StoredItemsSchema = z.array(z.custom<JsonRecord>((value) => isRecord(value), "an item must be an object"));

/** What {@link toModelMessages} reads: an array of stored items, or a context holding them in `messages`. */
const StoredSourceSchema = z.union([StoredItemsSchema, z.looseObject({ messages: StoredItemsSchema })]);

/** A `generateText` result as far as its messages go: ai 7's `responseMessages`, or ai 6's `response.messages`. */
const CallResultSchema = z.union([
  z.looseObject({ responseMessages: z.array(z.unknown()) }),
  z.looseObject({ response: z.looseObject({ messages: z.array(z.unknown()) }) }),
]);

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** The messages as plain JSON: bytes as base64, a `URL` as its string, `undefined` fields left out. */
function asJson(messages: readonly unknown[]): Result<JsonRecord[], KeelError> {
  try {
    const text = JSON.stringify(messages, function (this: Record<string, unknown>, key: string, value: unknown) {
      const original = key === "" ? value : this[key];
      if (original instanceof Uint8Array) return base64(original);
      if (original instanceof ArrayBuffer) return base64(new Uint8Array(original));
      if (typeof value === "bigint") throw new Error(`${key} is a bigint`);
      return value;
    });
    return ok(JSON.parse(text) as JsonRecord[]);
  } catch (error) {
    return err(new KeelError("invalid_input", `the model messages are not JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
  }
}

/**
 * A message as a transcript stores it: the `message` of what `parseEntry` (the transcript's own
 * check on append) makes of a message entry holding it, keys in the caller's order; `undefined`
 * when the transcript would refuse it.
 */
function storedForm(candidate: JsonRecord): JsonRecord | undefined {
  const entry = parseEntry({ type: "message", id: "stored-form", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: candidate });
  return entry.isOk() && isRecord(entry.value.message) ? entry.value.message : undefined;
}

/**
 * Transcript entries (to append) from AI SDK `ModelMessage`s, byte-faithful: `toModelMessages`
 * of what this returns gives back the same JSON, keys in the same order.
 *
 * Each message becomes a pi-shaped `message` entry that Keel's context, compaction and pi export
 * read: `user` and `assistant` one for one (`reasoning` as `thinking`, `tool-call` as `toolCall`,
 * an inline base64 `image` as `image`); a `tool` message as one `toolResult` per result (text of
 * the output in `content`). Images and files by URL stay references; a part pi has no block for
 * (a file, a provider-executed tool result) is kept as it is. What pi's shape cannot hold (a JSON
 * output's type, an assistant's string content, extra fields of a tool message) goes into one
 * optional `aiSdk` field of the stored message. A `system` message (and a tool message without a
 * result) is kept under its own role, which the transcript's context leaves out: pass the system
 * prompt on each call instead.
 *
 * Binary data (`Uint8Array`, `ArrayBuffer`) is stored as base64 and a `URL` as its string: the
 * round trip is faithful to the messages' JSON.
 *
 * @returns the entries in order, or `invalid_input` when a message is not a `ModelMessage`
 * (role, content), is not JSON, or has a field named `aiSdk`.
 *
 * @example
 * ```ts
 * const entries = fromModelMessages(responseMessagesOf(result)._unsafeUnwrap())._unsafeUnwrap();
 * for (const entry of entries) await transcript.append(entry);
 * ```
 */
export function fromModelMessages(messages: readonly ModelMessage[]): Result<TranscriptEntryInput[], KeelError> {
  const list = validate(MessageListSchema, messages, "model messages (an array)");
  if (list.isErr()) return err(list.error);
  for (const [index, message] of list.value.entries()) {
    const checked = validate(ModelMessageSchema, message, `model message ${index}`);
    if (checked.isErr()) return err(checked.error);
  }
  // The list read once (above): a proxy's or a getter's later answers are not what was checked.
  return asJson(list.value)
    .andThen((json) => {
      const entries: TranscriptEntryInput[] = [];
      let previousRole: unknown;
      for (const [index, message] of json.entries()) {
        if (Object.hasOwn(message, MARKER_KEY)) {
          return err(new KeelError("invalid_input", `model message ${index} has a field named ${MARKER_KEY}: the name is reserved for what the transcript keeps beside pi's shape`));
        }
        const stored = messageToPi(message, storedForm);
        if (stored === undefined) {
          return err(new KeelError("invalid_input", `model message ${index} (${String(message.role)}) cannot be stored faithfully: check its fields against the AI SDK's ModelMessage`));
        }
        for (const [position, item] of stored.entries()) {
          const piece = position === 0 && item.role === "toolResult" && previousRole !== undefined && previousRole !== "user" && previousRole !== "assistant" ? markSplit(item) : item;
          entries.push({ type: "message", message: piece as TranscriptMessage });
          previousRole = piece.role;
        }
      }
      return ok(entries);
    });
}

/**
 * The messages every step of a `generateText` call produced (the tool loop's calls, results and
 * answers, in order), with `ai` 6 and 7 alike: ai 7's `result.responseMessages`, else ai 6's
 * `result.response.messages`. Why not `response.messages` always: in ai 7 it holds only the last
 * step's messages, and storing it silently drops the turn's tool calls and their results. For
 * `streamText`, pass the awaited fields (`{ responseMessages: await result.responseMessages }` in
 * ai 7, `{ response: await result.response }` in ai 6).
 *
 * @returns the messages (the result's own array), or `invalid_input` when `result` has neither.
 *
 * @example
 * ```ts
 * const result = await generateText({ model, tools, stopWhen: stepCountIs(10), messages: [...history, userMessage] });
 * const entries = fromModelMessages([userMessage, ...responseMessagesOf(result)._unsafeUnwrap()])._unsafeUnwrap();
 * ```
 */
export function responseMessagesOf(result: { readonly response: { readonly messages: readonly ModelMessage[] } } | { readonly responseMessages: readonly ModelMessage[] }): Result<ModelMessage[], KeelError> {
  return validate(CallResultSchema, result, "AI SDK call result").map(() => {
    const all = (result as { responseMessages?: unknown }).responseMessages;
    return (Array.isArray(all) ? all : (result as { response: { messages: unknown } }).response.messages) as ModelMessage[];
  });
}

/**
 * AI SDK `ModelMessage`s from a transcript: its context (`transcript.buildContext()`, compaction
 * summary and branch summaries included), its entries (message entries only, other types
 * skipped) or bare stored messages. The reverse of {@link fromModelMessages}; messages pi wrote
 * itself are read too (pi's own fields such as signatures, usage and timestamps are left out,
 * consecutive tool results become one tool message).
 *
 * @returns the messages, or `invalid_input` when an item is not an object (or reading one throws).
 *
 * @example
 * ```ts
 * const messages = toModelMessages(transcript.buildContext()._unsafeUnwrap())._unsafeUnwrap();
 * await generateText({ model, messages: [...messages, { role: "user", content: "Go on" }] });
 * ```
 */
export function toModelMessages(source: TranscriptContext | readonly (TranscriptEntry | TranscriptEntryInput | TranscriptMessage)[]): Result<ModelMessage[], KeelError> {
  // Checked (and read) once, inside the check: a proxy or a getter that throws is invalid_input, never a throw.
  return validate(StoredSourceSchema, source, "transcript messages").andThen((checked) => {
    const items = (Array.isArray(checked) ? checked : checked.messages) as JsonRecord[];
    const stored: JsonRecord[] = [];
    try {
      for (const item of items) {
        if (typeof item.type === "string") {
          if (item.type === "message" && isRecord(item.message)) stored.push(item.message);
        } else stored.push(item);
      }
      return ok(piToMessages(stored) as unknown as ModelMessage[]);
    } catch (cause) {
      // The items are the caller's own objects (kept as they are, for a byte-faithful trip): a proxy or a getter that throws when read is the caller's bad input.
      return err(new KeelError("invalid_input", "invalid transcript messages: reading them threw", { cause, details: { what: "transcript messages" } }));
    }
  });
}
