import type { ContextMessage } from "./context-build.js";
import { type FileOperations, formatFileOperations } from "./compaction-files.js";

/** What a summary is of: the history before a cut, the start of a split turn, or an abandoned branch. */
export type SummaryKind = "history" | "turn_prefix" | "branch";

/** The system prompt of every summary call. */
export const SUMMARY_SYSTEM_PROMPT =
  "You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.\n\nDo NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

/** The longest tool result, in characters, written into a summary request. */
export const TOOL_RESULT_MAX_CHARS = 2000;

/** The headings a summary of each kind must contain (checked by `compact` and `navigate`). */
export const REQUIRED_SECTIONS: Record<SummaryKind, readonly string[]> = {
  history: ["## Goal", "## Progress", "## Next Steps"],
  turn_prefix: ["## Original Request"],
  branch: ["## Goal", "## Progress"],
};

const HISTORY_FORMAT = `## Goal
[What is the user trying to accomplish? Several items if the session covers several tasks.]

## Constraints & Preferences
- [Constraints, preferences and requirements the user stated, or "(none)"]

## Progress
### Done
- [x] [Completed tasks and changes]

### In Progress
- [ ] [Current work]

### Blocked
- [What prevents progress, if anything]

## Key Decisions
- **[Decision]**: [Its rationale: why this and not the alternative]

## Next Steps
1. [Ordered list of what should happen next]

## Files
- [Files read and modified, with what changed in each]

## Critical Context
- [Data, examples or references needed to continue, or "(none)"]

Keep each section concise. Preserve exact file paths, function names and error messages.`;

const HISTORY_PROMPT = `The messages above are a conversation to summarize. Create a structured context checkpoint summary that another model will use to continue the work.

Use this EXACT format:

${HISTORY_FORMAT}`;

const UPDATE_PROMPT = `The messages above are NEW conversation messages to fold into the existing summary in <previous-summary>.

Update the summary. RULES:
- PRESERVE every goal, constraint, decision, file and piece of context of the previous summary unless the new messages make it obsolete
- ADD the new progress, decisions (with their rationale) and context
- MOVE items from "In Progress" to "Done" when they were completed
- UPDATE "Next Steps" from what was accomplished

Use this EXACT format:

${HISTORY_FORMAT}`;

const TURN_PREFIX_PROMPT = `This is the PREFIX of a turn too large to keep. The SUFFIX (the recent work) is kept verbatim.

Summarize the prefix so the kept suffix can be understood:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions and work done in the prefix, with their rationale]

## Context for Suffix
- [What is needed to understand the kept recent work]

Be concise.`;

const BRANCH_PROMPT = `The messages above are a branch of the conversation that the user left to go back to an earlier point. Summarize what was explored so that it can inform the work that continues from there.

Use this EXACT format:

## Goal
[What the user was trying to do on this branch]

## Constraints & Preferences
- [Constraints and preferences stated, or "(none)"]

## Progress
### Done
- [x] [What was completed]

### In Progress
- [ ] [What was left unfinished]

## Key Decisions
- **[Decision]**: [Its rationale]

## Next Steps
1. [What would have come next]

## Files
- [Files read and modified on the branch]

Keep each section concise. Preserve exact file paths, function names and error messages.`;

function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n\n[... ${text.length - maxChars} more characters truncated]`;
}

function textOf(content: ContextMessage["content"]): string {
  if (typeof content === "string") return content;
  return content
    .filter((block) => block.type === "text")
    .map((block) => String(block["text"]))
    .join("");
}

/**
 * Writes messages as plain labelled text (`[User]: …`, `[Assistant]: …`, `[Assistant tool calls]:
 * read(path="a.ts")`, `[Tool result]: …` cut at {@link TOOL_RESULT_MAX_CHARS}), so the summarizer
 * reads a transcript instead of continuing a conversation.
 */
export function serializeConversation(messages: readonly ContextMessage[]): string {
  const parts: string[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      const text = textOf(message.content);
      if (text) parts.push(`[User]: ${text}`);
    } else if (message.role === "assistant") {
      const texts: string[] = [];
      const thinking: string[] = [];
      const calls: string[] = [];
      for (const block of message.content) {
        if (block.type === "text") texts.push(String(block["text"]));
        else if (block.type === "thinking") thinking.push(String(block["thinking"]));
        else if (block.type === "toolCall") {
          const argumentsText = Object.entries((block["arguments"] ?? {}) as Record<string, unknown>)
            .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
            .join(", ");
          calls.push(`${String(block["name"])}(${argumentsText})`);
        }
      }
      if (thinking.length > 0) parts.push(`[Assistant thinking]: ${thinking.join("\n")}`);
      if (texts.length > 0) parts.push(`[Assistant]: ${texts.join("\n")}`);
      if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
    } else if (message.role === "toolResult") {
      const text = textOf(message.content);
      if (text) parts.push(`[Tool result]: ${truncate(text, TOOL_RESULT_MAX_CHARS)}`);
    }
  }
  return parts.join("\n\n");
}

/** What {@link buildSummaryPrompt} needs. */
export interface SummaryPromptInput {
  kind: SummaryKind;
  messages: readonly ContextMessage[];
  /** The previous summary to fold in (history summaries only). */
  previousSummary?: string | null;
  /** The host's instructions, passed to every summary call (turn prefixes and branches too). */
  customInstructions?: string;
  /** The files tracked so far, listed for the summarizer. */
  files?: FileOperations;
}

/**
 * Keel's summary prompt: the conversation as text in `<conversation>`, the previous summary in
 * `<previous-summary>` when there is one, the sections to write (goal, constraints, progress,
 * decisions with rationale, next steps, files, critical context), the tracked files, and the
 * host's custom instructions.
 */
export function buildSummaryPrompt(input: SummaryPromptInput): string {
  let prompt = `<conversation>\n${serializeConversation(input.messages)}\n</conversation>\n\n`;
  if (input.kind === "history" && input.previousSummary) prompt += `<previous-summary>\n${input.previousSummary}\n</previous-summary>\n\n`;
  if (input.files && (input.files.readFiles.length > 0 || input.files.modifiedFiles.length > 0)) {
    prompt += `Files tracked so far:${formatFileOperations(input.files)}\n\n`;
  }
  if (input.kind === "history") prompt += input.previousSummary ? UPDATE_PROMPT : HISTORY_PROMPT;
  else if (input.kind === "turn_prefix") prompt += TURN_PREFIX_PROMPT;
  else prompt += BRANCH_PROMPT;
  if (input.customInstructions) prompt += `\n\nAdditional focus: ${input.customInstructions}`;
  return prompt;
}
