import { isEntryId, isIsoTimestamp, type TranscriptEntry } from "../entry-schema.js";

/**
 * The fast path of entry validation (see `validateFast` in `@keel/core`): answers the entry
 * itself when it is plainly well formed, `undefined` for anything else, which the zod schemas
 * then judge and report. It may answer only for inputs the schemas accept, with their output
 * (deep-equal); a property test checks that against `ENTRY_SCHEMAS` on random entries.
 *
 * Why: opening or importing a session validates every entry. zod's parse of a 100,000-entry
 * session costs several times the `JSON.parse` of its file, which made an open miss the target
 * of staying within 1.5x of reading and parsing the file (bench/transcript.bench.ts).
 * Kept for speed: it serves transcript open at ≥ 2× pi and ≤ 1.5× the floor (issue 31).
 */

type Shape = Record<string, unknown>;

const isObject = (value: unknown): value is Shape => typeof value === "object" && value !== null && !Array.isArray(value);
const isId = isEntryId;
const isCount = (value: unknown): boolean => typeof value === "number" && Number.isFinite(value) && value >= 0;
const optionalString = (value: unknown): boolean => value === undefined || typeof value === "string";
const optionalBoolean = (value: unknown): boolean => value === undefined || typeof value === "boolean";
const optionalNumber = (value: unknown): boolean => value === undefined || (typeof value === "number" && Number.isFinite(value));
const SOURCES = new Set(["summarizer", "hook", "import"]);
const optionalSource = (value: unknown): boolean => value === undefined || (typeof value === "string" && SOURCES.has(value));

function isBlock(block: unknown): boolean {
  if (!isObject(block) || typeof block["type"] !== "string") return false;
  switch (block["type"]) {
    case "text":
      return typeof block["text"] === "string";
    case "image":
      return typeof block["data"] === "string" && typeof block["mimeType"] === "string";
    case "thinking":
      return typeof block["thinking"] === "string";
    case "toolCall":
      return typeof block["id"] === "string" && typeof block["name"] === "string" && isObject(block["arguments"]);
    default:
      return true;
  }
}

function isBlocks(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const block of value) if (!isBlock(block)) return false;
  return true;
}

const isContent = (value: unknown): boolean => typeof value === "string" || isBlocks(value);

function isUsage(value: unknown): boolean {
  if (value === undefined) return true;
  if (!isObject(value)) return false;
  return isCount(value["input"]) && isCount(value["output"]) && isCount(value["cacheRead"]) && isCount(value["cacheWrite"]) && (value["totalTokens"] === undefined || isCount(value["totalTokens"])) && (value["cost"] === undefined || isObject(value["cost"]));
}

function isMessage(message: unknown): boolean {
  if (!isObject(message) || typeof message["role"] !== "string") return false;
  switch (message["role"]) {
    case "user":
      return isContent(message["content"]) && optionalNumber(message["timestamp"]);
    case "assistant":
      return (
        isBlocks(message["content"]) &&
        optionalString(message["provider"]) &&
        optionalString(message["model"]) &&
        optionalString(message["stopReason"]) &&
        optionalString(message["errorMessage"]) &&
        isUsage(message["usage"]) &&
        optionalNumber(message["timestamp"])
      );
    case "toolResult":
      return (
        typeof message["toolCallId"] === "string" &&
        typeof message["toolName"] === "string" &&
        isBlocks(message["content"]) &&
        optionalBoolean(message["isError"]) &&
        optionalBoolean(message["excludeFromContext"]) &&
        optionalNumber(message["timestamp"])
      );
    case "bashExecution":
      return (
        typeof message["command"] === "string" &&
        typeof message["output"] === "string" &&
        (message["exitCode"] === undefined || message["exitCode"] === null || (typeof message["exitCode"] === "number" && Number.isFinite(message["exitCode"]))) &&
        optionalBoolean(message["cancelled"]) &&
        optionalBoolean(message["truncated"]) &&
        optionalString(message["fullOutputPath"]) &&
        optionalBoolean(message["excludeFromContext"]) &&
        optionalNumber(message["timestamp"])
      );
    case "custom":
      return typeof message["customType"] === "string" && isContent(message["content"]) && optionalBoolean(message["display"]) && optionalNumber(message["timestamp"]);
    default:
      return true;
  }
}

function isTyped(entry: Shape): boolean {
  switch (entry["type"]) {
    case "message":
      return isMessage(entry["message"]);
    case "model_change":
      return typeof entry["provider"] === "string" && typeof entry["modelId"] === "string";
    case "thinking_change":
      return typeof entry["thinkingLevel"] === "string";
    case "compaction":
      return (
        typeof entry["summary"] === "string" &&
        isId(entry["firstKeptEntryId"]) &&
        isCount(entry["tokensBefore"]) &&
        (entry["tokensAfter"] === undefined || isCount(entry["tokensAfter"])) &&
        optionalSource(entry["source"])
      );
    case "branch_summary":
      return typeof entry["fromId"] === "string" && typeof entry["summary"] === "string" && optionalSource(entry["source"]);
    case "custom":
      return typeof entry["customType"] === "string";
    case "custom_message":
      return typeof entry["customType"] === "string" && isContent(entry["content"]) && typeof entry["display"] === "boolean";
    case "label":
      return isId(entry["targetId"]) && optionalString(entry["label"]);
    case "session_info":
      return optionalString(entry["name"]);
    default:
      return true;
  }
}

/** The entry itself when it is plainly well formed (see the file's header), else `undefined`. */
export function acceptEntry(value: unknown): TranscriptEntry | undefined {
  if (!isObject(value)) return undefined;
  if (typeof value["type"] !== "string" || value["type"].length === 0) return undefined;
  if (!isId(value["id"])) return undefined;
  const parentId = value["parentId"];
  if (parentId !== null && !isId(parentId)) return undefined;
  if (!isIsoTimestamp(value["timestamp"])) return undefined;
  return isTyped(value) ? (value as TranscriptEntry) : undefined;
}
