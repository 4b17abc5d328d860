import { blockToPart, isRecord, keepVerbatim, partToBlock, withoutKeys, type JsonRecord } from "./message-parts.js";

/**
 * Messages of the AI SDK (`ModelMessage`: `system`, `user`, `assistant`, `tool`) and of a Keel
 * transcript (pi's roles `user`, `assistant`, `toolResult`), both ways.
 *
 * Why a marker: pi has no string content for an assistant, one message per tool result, and
 * text-only tool output. What the pi shape cannot say is kept in one optional field of the stored
 * message, {@link MARKER_KEY}, written only when needed and never sent to a model. Every message
 * written is checked by converting it back: when the trip would not give the same JSON (same keys
 * in the same order), a more literal form is chosen (pi-only fields kept, then every part
 * verbatim), so a round trip is always byte-faithful. The key order of what is stored is the
 * transcript's business (it keeps the caller's order, `parseEntry`); the marker records an order
 * only where this conversion itself moves a key.
 */

/** The field of a stored message that holds what pi's shape cannot say. */
export const MARKER_KEY = "aiSdk";

/** What {@link MARKER_KEY} holds (every field optional). */
export interface Marker {
  /** Keep every field when reading back (pi-only names were the AI SDK's own). */
  keep?: true;
  /** The assistant's content was one string. */
  content?: "text";
  /** This tool result starts a new tool message although the one before is a tool result too. */
  split?: true;
  /** The tool output: its type when the value is the text of `content`, else the output itself. */
  output?: string | JsonRecord;
  /** The tool message when it has fields besides `role` and `content` (`content: null` in place). */
  message?: JsonRecord;
  /** Parts of the tool message (approval responses) before this result. */
  before?: JsonRecord[];
  /** Parts of the tool message after this result. */
  after?: JsonRecord[];
  /** The whole tool-result part, when no pi form holds it. */
  part?: JsonRecord;
  /** Fields of the message whose names pi gives another meaning (`timestamp`, `usage` …), kept aside. */
  fields?: JsonRecord;
  /** The message's own key order, where fields kept aside in `fields` would come back elsewhere. */
  order?: string[];
}

/** Fields pi writes on its messages that the AI SDK has no use for, by role. */
const PI_ONLY_MESSAGE_KEYS: Readonly<Record<string, readonly string[]>> = {
  user: ["timestamp"],
  assistant: ["provider", "model", "api", "usage", "stopReason", "errorMessage", "timestamp", "responseId"],
};
/** Fields of a stored tool result that are not the AI SDK part's (read from `content` and the marker instead). */
const TOOL_RESULT_OWN_KEYS: ReadonlySet<string> = new Set(["role", "content", "isError", "excludeFromContext", "timestamp", "details", MARKER_KEY]);

function markerOf(message: JsonRecord): Marker {
  return isRecord(message[MARKER_KEY]) ? (message[MARKER_KEY] as Marker) : {};
}

function withMarker(message: JsonRecord, marker: Marker): JsonRecord {
  return Object.keys(marker).length === 0 ? message : { ...message, [MARKER_KEY]: marker };
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function textOf(blocks: readonly unknown[]): string {
  return blocks
    .filter((block): block is { type: "text"; text: string } => isRecord(block) && block.type === "text" && typeof block.text === "string")
    .map((block) => block.text)
    .join("\n");
}

// ---------------------------------------------------------------------------------------------
// user and assistant

type Literalness = "mapped" | "kept" | "verbatim";

function userOrAssistantToPi(message: JsonRecord, literalness: Literalness): JsonRecord {
  const marker: Marker = literalness === "mapped" ? {} : { keep: true };
  const out: JsonRecord = {};
  const aside = literalness === "verbatim" ? (PI_ONLY_MESSAGE_KEYS[message.role as string] ?? []) : [];
  for (const [key, value] of Object.entries(message)) {
    if (aside.includes(key)) {
      // defineProperty: a "__proto__" field stays an own key of the JSON value.
      marker.fields = Object.defineProperty({ ...marker.fields }, key, { value, enumerable: true, writable: true, configurable: true });
    }
    else if (key !== "content") out[key] = value;
    else if (typeof value === "string") {
      if (message.role === "assistant") {
        out.content = [{ type: "text", text: value }];
        marker.content = "text";
      } else out.content = value;
    } else if (Array.isArray(value)) {
      out.content = value.map((part) => (isRecord(part) ? (literalness === "verbatim" ? keepVerbatim(part) : partToBlock(part)) : part));
    } else out.content = value;
  }
  if (marker.fields) {
    // Read back, the fields set aside come last: remember the order when that moves one.
    const keys = Object.keys(message);
    const back = [...keys.filter((key) => !aside.includes(key)), ...keys.filter((key) => aside.includes(key))];
    if (back.join("\u0000") !== keys.join("\u0000")) marker.order = keys;
  }
  return withMarker(out, marker);
}

/** `message` with its keys in `order` (keys `order` does not name last), or as it is without one. */
function inOrder(message: JsonRecord, order: unknown): JsonRecord {
  if (!Array.isArray(order)) return message;
  const out: JsonRecord = {};
  const set = (key: string) => Object.defineProperty(out, key, { value: message[key], enumerable: true, writable: true, configurable: true });
  for (const key of order) if (typeof key === "string" && Object.hasOwn(message, key) && !Object.hasOwn(out, key)) set(key);
  for (const key of Object.keys(message)) if (!Object.hasOwn(out, key)) set(key);
  return out;
}

function userOrAssistantFromPi(message: JsonRecord): JsonRecord {
  const marker = markerOf(message);
  const keep = marker.keep === true;
  const role = message.role as string;
  const source = keep ? message : withoutKeys(message, PI_ONLY_MESSAGE_KEYS[role] ?? []);
  const out: JsonRecord = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === MARKER_KEY) continue;
    if (key === "role") out.role = role === "custom" ? "user" : role;
    else if (key === "content" && marker.content === "text" && Array.isArray(value)) out.content = textOf(value);
    else if (key === "content" && Array.isArray(value)) {
      out.content = value.flatMap((block) => {
        if (!isRecord(block)) return [block];
        const part = blockToPart(block, keep);
        return part === undefined ? [] : [part];
      });
    } else if (role === "custom" && key !== "content") continue;
    else out[key] = value;
  }
  if (isRecord(marker.fields)) {
    for (const [key, value] of Object.entries(marker.fields)) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return inOrder(out, marker.order);
}

// ---------------------------------------------------------------------------------------------
// tool results

function outputToContent(output: JsonRecord): { content: unknown[]; isError: boolean; type: string } | undefined {
  const type = output.type;
  const keys = Object.keys(output);
  const plain = keys.length === 2 && keys[0] === "type" && keys[1] === "value";
  switch (type) {
    case "text":
    case "error-text":
      return plain && typeof output.value === "string" ? { content: [{ type: "text", text: output.value }], isError: type === "error-text", type } : undefined;
    case "json":
    case "error-json":
      return plain && output.value !== undefined ? { content: [{ type: "text", text: JSON.stringify(output.value) }], isError: type === "error-json", type } : undefined;
    case "content":
      return plain && Array.isArray(output.value)
        ? { content: output.value.map((part) => (isRecord(part) ? keepVerbatimUnlessText(part) : part)), isError: false, type }
        : undefined;
    case "execution-denied":
      if (keys.length === 1 && keys[0] === "type") return { content: [], isError: false, type };
      if (keys.length === 2 && keys[1] === "reason" && typeof output.reason === "string") return { content: [{ type: "text", text: output.reason }], isError: false, type };
      return undefined;
    default:
      return undefined;
  }
}

function keepVerbatimUnlessText(part: JsonRecord): JsonRecord {
  return part.type === "text" && typeof part.text === "string" ? part : keepVerbatim(part);
}

/** The text blocks (or, failing that, any blocks) of a tool output, for pi and Keel's compaction to read. */
function contentForPi(output: unknown): unknown[] {
  if (!isRecord(output)) return [];
  const value = output.value ?? output.reason;
  if (typeof value === "string") return [{ type: "text", text: value }];
  if (output.type === "content" && Array.isArray(value)) return value.filter(isRecord).map(keepVerbatimUnlessText);
  return value === undefined ? [] : [{ type: "text", text: JSON.stringify(value) }];
}

function toolResultToPi(part: JsonRecord, literal: boolean): JsonRecord {
  const collides = Object.keys(part).some((key) => TOOL_RESULT_OWN_KEYS.has(key));
  const ids = typeof part.toolCallId === "string" && typeof part.toolName === "string" && isRecord(part.output);
  if (collides || !ids) {
    return {
      role: "toolResult",
      toolCallId: typeof part.toolCallId === "string" ? part.toolCallId : "",
      toolName: typeof part.toolName === "string" ? part.toolName : "",
      content: contentForPi(part.output),
      [MARKER_KEY]: { part } satisfies Marker,
    };
  }
  const output = part.output as JsonRecord;
  const mapped = literal ? undefined : outputToContent(output);
  const marker: Marker = {};
  const out: JsonRecord = {};
  for (const [key, value] of Object.entries(part)) {
    if (key === "type") out.role = "toolResult";
    else if (key !== "output") out[key] = value;
    else if (mapped) {
      out.content = mapped.content;
      if (mapped.isError) out.isError = true;
      if (mapped.type !== "text" && mapped.type !== "error-text") marker.output = mapped.type;
    } else {
      out.content = contentForPi(output);
      marker.output = output;
    }
  }
  return withMarker(out, marker);
}

function contentToOutput(message: JsonRecord, marker: Marker): JsonRecord {
  const blocks = Array.isArray(message.content) ? message.content : [];
  const isError = message.isError === true;
  const text = textOf(blocks);
  // Output the host excluded from the context is sent as the placeholder text the context holds.
  if (message.excludeFromContext === true) return { type: isError ? "error-text" : "text", value: text };
  if (isRecord(marker.output)) return marker.output;
  const declared = typeof marker.output === "string" ? marker.output : undefined;
  {
    if (declared === "json" || declared === "error-json") {
      try {
        return { type: declared, value: JSON.parse(text) as unknown };
      } catch {
        // not JSON any more (an excluded output's placeholder): sent as text below
      }
    }
    if (declared === "content") return { type: "content", value: blocks.map((block) => (isRecord(block) ? blockToPart(block, true) : block)) };
    if (declared === "execution-denied") return blocks.length === 0 ? { type: declared } : { type: declared, reason: text };
  }
  const images = blocks.filter((block) => isRecord(block) && block.type === "image");
  if (images.length > 0 && !isError) {
    const value = blocks.flatMap((block): JsonRecord[] => {
      if (!isRecord(block)) return [];
      if (block.type === "text") return [{ type: "text", text: block.text }];
      if (block.type === "image") return [{ type: "media", data: block.data, mediaType: block.mimeType }];
      return [];
    });
    return { type: "content", value };
  }
  return { type: isError ? "error-text" : "text", value: text };
}

function toolResultFromPi(message: JsonRecord): JsonRecord {
  const marker = markerOf(message);
  if (isRecord(marker.part)) return message.excludeFromContext === true ? { ...marker.part, output: contentToOutput(message, {}) } : marker.part;
  const out: JsonRecord = {};
  for (const [key, value] of Object.entries(message)) {
    if (key === "role") out.type = "tool-result";
    else if (key === "content") out.output = contentToOutput(message, marker);
    else if (!TOOL_RESULT_OWN_KEYS.has(key)) out[key] = value;
  }
  if (!("output" in out)) out.output = contentToOutput(message, marker);
  return out;
}

/** The stored tool results of one AI SDK tool message (at least one tool-result part). */
function toolMessageToPi(message: JsonRecord, literal: boolean): JsonRecord[] {
  const parts = message.content as JsonRecord[];
  const results: JsonRecord[] = [];
  const markers: Marker[] = [];
  let pending: JsonRecord[] = [];
  for (const part of parts) {
    if (isRecord(part) && part.type === "tool-result") {
      const stored = toolResultToPi(part, literal);
      const marker: Marker = { ...markerOf(stored) };
      if (pending.length > 0) marker.before = pending;
      pending = [];
      results.push(withoutKeys(stored, [MARKER_KEY]));
      markers.push(marker);
    } else if (results.length > 0) {
      const last = markers[markers.length - 1] as Marker;
      last.after = [...(last.after ?? []), part];
    } else pending.push(part);
  }
  const keys = Object.keys(message);
  if (keys.length !== 2 || keys[0] !== "role" || keys[1] !== "content") {
    (markers[0] as Marker).message = { ...message, content: null };
  }
  return results.map((result, index) => withMarker(result, markers[index] as Marker));
}

/** One AI SDK tool message from its stored results (the first carries the message's marker). */
export function toolMessageFromPi(results: readonly JsonRecord[]): JsonRecord {
  const content: unknown[] = [];
  for (const result of results) {
    const marker = markerOf(result);
    content.push(...(marker.before ?? []), toolResultFromPi(result), ...(marker.after ?? []));
  }
  const first = results[0] ? markerOf(results[0]) : {};
  return isRecord(first.message) ? { ...first.message, content } : { role: "tool", content };
}

// ---------------------------------------------------------------------------------------------
// whole messages

/**
 * The stored form of `candidate` as the transcript keeps it (`normalize`: what its `parseEntry`
 * gives, the caller's key order kept); `undefined` when it does not come back as `message`.
 */
function settle(message: JsonRecord, candidate: readonly JsonRecord[], normalize: (stored: JsonRecord) => JsonRecord | undefined): JsonRecord[] | undefined {
  const stored: JsonRecord[] = [];
  for (const item of candidate) {
    const normalized = normalize(item);
    if (normalized === undefined) return undefined;
    stored.push(normalized);
  }
  return same(piToMessages(stored), [message]) ? stored : undefined;
}

/**
 * The stored form(s) of one AI SDK message: the most mapped form whose trip back through the
 * transcript (`normalize`, its schema) is faithful; `undefined` when none is.
 */
export function messageToPi(message: JsonRecord, normalize: (stored: JsonRecord) => JsonRecord | undefined): JsonRecord[] | undefined {
  const role = message.role;
  if (role === "user" || role === "assistant") {
    for (const literalness of ["mapped", "kept", "verbatim"] as const) {
      const stored = settle(message, [userOrAssistantToPi(message, literalness)], normalize);
      if (stored) return stored;
    }
    return undefined;
  }
  if (role === "tool" && Array.isArray(message.content) && message.content.some((part) => isRecord(part) && part.type === "tool-result")) {
    for (const literal of [false, true]) {
      const stored = settle(message, toolMessageToPi(message, literal), normalize);
      if (stored) return stored;
    }
    return undefined;
  }
  // A system message, or a tool message without a result: kept as it is (a role pi does not
  // send, so the transcript's context leaves it out; `toModelMessages` of the entries keeps it).
  return settle(message, [message], normalize);
}

/** Marks the first stored result of a tool message that follows another tool message's results. */
export function markSplit(stored: JsonRecord): JsonRecord {
  return withMarker(stored, { ...markerOf(stored), split: true });
}

/**
 * AI SDK messages from stored messages: user, assistant and custom (as user) messages one for
 * one, consecutive tool results gathered into one tool message (unless marked `split`), shell
 * executions left out (the transcript's context has their text), other roles as they are.
 */
export function piToMessages(stored: readonly JsonRecord[]): JsonRecord[] {
  const out: JsonRecord[] = [];
  let group: JsonRecord[] = [];
  const flush = () => {
    if (group.length > 0) out.push(toolMessageFromPi(group));
    group = [];
  };
  for (const message of stored) {
    if (message.role === "toolResult") {
      if (markerOf(message).split === true) flush();
      group.push(message);
      continue;
    }
    flush();
    if (message.role === "user" || message.role === "assistant" || message.role === "custom") out.push(userOrAssistantFromPi(message));
    else if (message.role !== "bashExecution") out.push(withoutKeys(message, [MARKER_KEY]));
  }
  flush();
  return out;
}
