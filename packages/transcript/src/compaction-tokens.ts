import { KeelError, type TokenEstimator } from "@keel/core";
import { type ContextMessage, compactionMessage, entryToContextMessage } from "./context-build.js";
import type { ContentBlock, TranscriptEntry } from "./entry-schema.js";

/** What one image costs the context, in tokens (pi counts 4,800 characters, about 1,200 tokens). */
export const IMAGE_TOKENS = 1200;

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return String(block["text"] ?? "");
    case "thinking":
      return String(block["thinking"] ?? "");
    case "toolCall":
      return `${String(block["name"] ?? "")}${JSON.stringify(block["arguments"] ?? {})}`;
    default:
      return "";
  }
}

/**
 * Estimates the tokens one context message costs: the text of every text, thinking and tool call
 * block through `estimator`, {@link IMAGE_TOKENS} a image, in every role alike.
 */
export function estimateMessageTokens(message: ContextMessage, estimator: TokenEstimator): number {
  const content = message.content;
  if (typeof content === "string") return estimator(content);
  let text = "";
  let images = 0;
  for (const block of content) {
    if (block.type === "image") images++;
    else text += blockText(block);
  }
  return (text.length > 0 ? estimator(text) : 0) + images * IMAGE_TOKENS;
}

/**
 * Estimates what an entry costs the context: every entry that reaches the model counts (messages,
 * `custom_message`, `branch_summary`; a compaction its summary); the others cost nothing.
 */
export function estimateEntryTokens(entry: TranscriptEntry, estimator: TokenEstimator): number {
  if (entry.type === "compaction") return estimateMessageTokens(compactionMessage(entry as never), estimator);
  const message = entryToContextMessage(entry);
  return message ? estimateMessageTokens(message, estimator) : 0;
}

/**
 * The host's estimator, checked on every answer: a count that is not a finite number ≥ 0 throws
 * an `invalid_input` `KeelError` at once (the callers turn any throw into a refused result).
 */
export function checkedEstimator(estimator: TokenEstimator): TokenEstimator {
  return (text) => {
    const tokens: unknown = estimator(text);
    if (typeof tokens !== "number" || !Number.isFinite(tokens) || tokens < 0) {
      throw new KeelError("invalid_input", `the token estimator answered ${String(tokens)}: answer a count of tokens (a finite number >= 0)`, { details: { reason: "estimator" } });
    }
    return tokens;
  };
}
