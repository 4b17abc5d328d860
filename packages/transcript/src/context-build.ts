import type {
  AssistantMessage,
  BashExecutionMessage,
  CompactionEntry,
  ContentBlock,
  ToolResultMessage,
  TranscriptEntry,
  UserMessage,
} from "./entry-schema.js";
import { isKnownEntry } from "./entry-schema.js";

/** The text before a compaction summary in the context (pi's wording, so pi and Keel send the same). */
export const COMPACTION_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/** The text after a compaction summary. */
export const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
/** The text before a branch summary in the context. */
export const BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/** The text after a branch summary. */
export const BRANCH_SUMMARY_SUFFIX = "</summary>";
/** What an excluded tool result's output is replaced with (the result stays, so its tool call is answered). */
export const EXCLUDED_OUTPUT_TEXT = "[output excluded from context]";
/** The thinking level in force when no entry on the path set one. */
export const DEFAULT_THINKING_LEVEL = "off";

/** A message as the model receives it: user, assistant or tool result. */
export type ContextMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** The model in force: set by a `model_change` or by the last assistant message on the path. */
export interface ContextModel {
  provider: string;
  modelId: string;
}

/** The model's context projected from a path of entries (what `buildContext` answers). */
export interface TranscriptContext {
  /** The messages for the model, in order. */
  messages: ContextMessage[];
  /** For each message, the id of the entry it came from (same index). */
  entryIds: string[];
  /** The model in force at the leaf, or `null` when none was recorded. */
  model: ContextModel | null;
  /** The thinking level in force at the leaf (`"off"` unless set). */
  thinkingLevel: string;
  /** The compaction whose summary opens the context, or `null`. */
  compactionId: string | null;
}

function timeOf(timestamp: string): number {
  return new Date(timestamp).getTime();
}

function contentBlocks(content: string | ContentBlock[]): ContentBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** The text pi sends for a user shell command (`Ran \`cmd\`` and its output). */
export function bashExecutionText(message: BashExecutionMessage): string {
  let text = `Ran \`${message.command}\`\n`;
  text += message.output ? `\`\`\`\n${message.output}\n\`\`\`` : "(no output)";
  if (message.cancelled) text += "\n\n(command cancelled)";
  else if (message.exitCode !== null && message.exitCode !== undefined && message.exitCode !== 0) {
    text += `\n\nCommand exited with code ${message.exitCode}`;
  }
  if (message.truncated && message.fullOutputPath) text += `\n\n[Output truncated. Full output: ${message.fullOutputPath}]`;
  return text;
}

/** The user message a compaction contributes (its summary, wrapped). */
export function compactionMessage(entry: CompactionEntry): UserMessage {
  return {
    role: "user",
    content: [{ type: "text", text: COMPACTION_SUMMARY_PREFIX + entry.summary + COMPACTION_SUMMARY_SUFFIX }],
    timestamp: timeOf(entry.timestamp),
  };
}

/**
 * The message an entry contributes to the context, or `undefined` for one that never reaches the
 * model (`custom`, `label`, `session_info`, model and thinking changes, unknown types and roles,
 * excluded shell output). A compaction is placed by {@link buildContextFromPath}, not here.
 */
export function entryToContextMessage(entry: TranscriptEntry): ContextMessage | undefined {
  if (!isKnownEntry(entry)) return undefined;
  switch (entry.type) {
    case "message": {
      const message = entry.message;
      switch (message.role) {
        case "user":
        case "assistant":
          return message as UserMessage | AssistantMessage;
        case "toolResult": {
          const result = message as ToolResultMessage;
          if (!result.excludeFromContext) return result;
          return { ...result, content: [{ type: "text", text: EXCLUDED_OUTPUT_TEXT }] };
        }
        case "bashExecution": {
          const bash = message as BashExecutionMessage;
          if (bash.excludeFromContext) return undefined;
          return { role: "user", content: [{ type: "text", text: bashExecutionText(bash) }], timestamp: bash.timestamp as number };
        }
        case "custom": {
          const custom = message as { content: string | ContentBlock[]; timestamp?: number };
          return { role: "user", content: contentBlocks(custom.content), timestamp: custom.timestamp as number };
        }
        default:
          return undefined;
      }
    }
    case "custom_message":
      return { role: "user", content: contentBlocks(entry.content), timestamp: timeOf(entry.timestamp) };
    case "branch_summary":
      if (!entry.summary) return undefined;
      return {
        role: "user",
        content: [{ type: "text", text: BRANCH_SUMMARY_PREFIX + entry.summary + BRANCH_SUMMARY_SUFFIX }],
        timestamp: timeOf(entry.timestamp),
      };
    default:
      return undefined;
  }
}

/**
 * Projects a root-to-leaf path onto the model's context, in one pass over the path (linear in its
 * length):
 * 1. the model and thinking level in force (the last `model_change` or assistant message, the
 *    last `thinking_change`) and the latest compaction on the path;
 * 2. with a compaction: its summary first, then the entries from its `firstKeptEntryId` up to the
 *    compaction, then everything after it; without: every entry;
 * 3. each entry converted by {@link entryToContextMessage} (`custom` never reaches the model,
 *    `custom_message` and `branch_summary` do as user content, excluded output stays out).
 *
 * The result equals what pi's `buildSessionContext` + `convertToLlm` produce for the same path.
 */
export function buildContextFromPath(path: readonly TranscriptEntry[]): TranscriptContext {
  let thinkingLevel = DEFAULT_THINKING_LEVEL;
  let model: ContextModel | null = null;
  let compactionIndex = -1;
  for (let index = 0; index < path.length; index++) {
    const entry = path[index] as TranscriptEntry;
    if (!isKnownEntry(entry)) continue;
    if (entry.type === "thinking_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "compaction") compactionIndex = index;
    else if (entry.type === "message" && entry.message.role === "assistant") {
      const assistant = entry.message as AssistantMessage;
      model = { provider: assistant.provider as string, modelId: assistant.model as string };
    }
  }
  const messages: ContextMessage[] = [];
  const entryIds: string[] = [];
  const add = (entry: TranscriptEntry): void => {
    const message = entryToContextMessage(entry);
    if (message === undefined) return;
    messages.push(message);
    entryIds.push(entry.id);
  };
  if (compactionIndex < 0) {
    for (const entry of path) add(entry);
    return { messages, entryIds, model, thinkingLevel, compactionId: null };
  }
  const compaction = path[compactionIndex] as CompactionEntry;
  messages.push(compactionMessage(compaction));
  entryIds.push(compaction.id);
  let kept = false;
  for (let index = 0; index < compactionIndex; index++) {
    const entry = path[index] as TranscriptEntry;
    if (!kept && entry.id === compaction.firstKeptEntryId) kept = true;
    if (kept) add(entry);
  }
  for (let index = compactionIndex + 1; index < path.length; index++) add(path[index] as TranscriptEntry);
  return { messages, entryIds, model, thinkingLevel, compactionId: compaction.id };
}
