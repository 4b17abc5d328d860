import { CLAUDE_STYLE_RESUME_FAILURE, createClaudeStyleParser, type StreamParser } from "../kit/index.js";

/**
 * Claude Code says a thread is gone with "No conversation found with session ID: …" (in the
 * `result` event's `errors`, or on stderr in text mode).
 */
export const CLAUDE_CODE_RESUME_FAILURE = CLAUDE_STYLE_RESUME_FAILURE;

/** Parser of Claude Code's `stream-json` output. */
export function createClaudeCodeParser(): StreamParser {
  return createClaudeStyleParser("claude-code");
}
