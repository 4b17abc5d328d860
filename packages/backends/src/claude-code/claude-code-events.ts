import { createJsonLineParser, type StreamParser } from "../kit/index.js";
import { asArray, asRecord, asString, captureThreadId, errorMessage, idField, setTurnUsage, textOfContent } from "../kit/index.js";
import { normalizeClaudeCodeUsage } from "./claude-code-usage.js";

/**
 * Claude Code says a thread is gone with "No conversation found with session ID: …" (in the
 * `result` event's `errors`, or on stderr in text mode).
 */
export const CLAUDE_CODE_RESUME_FAILURE = /no conversation found with session id|(session|conversation) .*not found/i;

function resultError(event: Readonly<Record<string, unknown>>): string {
  const errors = asArray(event.errors)
    .map((entry) => errorMessage(entry))
    .filter((entry): entry is string => entry !== undefined);
  if (errors.length > 0) return errors.join("; ");
  return errorMessage(event.error) ?? asString(event.result) ?? `result ${asString(event.subtype) ?? "error"}`;
}

/**
 * Parser of the Claude Code `stream-json` family (`-p --output-format stream-json --verbose`),
 * also spoken by Qoder CLI and Cursor CLI: `session_id` on every line (captured from the first,
 * `system/init`), `assistant` messages, and a terminal `result` event with the final text,
 * `is_error`/`subtype`, `usage` and `total_cost_usd`. Other event types are ignored.
 */
export function createClaudeStyleParser(backend = "claude-code"): StreamParser {
  let lastAssistantText: string | undefined;
  return createJsonLineParser((event, findings) => {
    captureThreadId(findings, idField(event, "session_id"));
    if (event.type === "assistant") {
      const text = textOfContent(asRecord(event.message)?.content);
      if (text !== undefined && text !== "") lastAssistantText = text;
      return;
    }
    if (event.type !== "result") return;
    findings.terminal = true;
    findings.text = asString(event.result) ?? lastAssistantText ?? null;
    setTurnUsage(findings, normalizeClaudeCodeUsage(event, backend));
    const subtype = asString(event.subtype);
    if (event.is_error === true || (subtype !== undefined && subtype !== "success")) findings.inBandError = resultError(event);
  });
}

/** Parser of Claude Code's `stream-json` output. */
export function createClaudeCodeParser(): StreamParser {
  return createClaudeStyleParser("claude-code");
}
