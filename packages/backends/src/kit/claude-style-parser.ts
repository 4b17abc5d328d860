import {
  asArray,
  asRecord,
  asString,
  captureThreadId,
  errorMessage,
  idField,
  setTurnUsage,
  textOfContent,
} from "./loose-json.js";
import { createJsonLineParser, type StreamParser } from "./stream-parser.js";
import { createToolLedger } from "./tool-ledger.js";
import { normalizeClaudeCodeUsage } from "./claude-style-usage.js";
import { claudeCodeReadBytes, claudeCodeToolAccesses, cursorToolAccesses, toolResultIds, toolUseBlocks } from "./claude-style-tools.js";

/**
 * Claude Code says a thread is gone with "No conversation found with session ID: …" (in the
 * `result` event's `errors`, or on stderr in text mode); Qoder, whose engine mirrors it, is read
 * the same way.
 */
export const CLAUDE_STYLE_RESUME_FAILURE = /no conversation found with session id|(session|conversation) .*not found/i;

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
 * `system/init`), `assistant` messages (their `tool_use` blocks are the tool calls: `Read`,
 * `Write`, `Edit`, `Grep`, `Glob`, `Bash` … — see `claudeCodeToolAccesses`), `user` messages
 * (a `Read`'s `tool_use_result` gives the bytes read), Cursor's `tool_call` events, and a
 * terminal `result` event with the final text, `is_error`/`subtype`, `usage` and
 * `total_cost_usd`. Other event types are ignored.
 */
export function createClaudeStyleParser(backend = "claude-code"): StreamParser {
  let lastAssistantText: string | undefined;
  // A Cursor call shows in a `started` and a `completed` event: counted once.
  const ledger = createToolLedger({ countOnce: true });
  return createJsonLineParser((event, findings) => {
    captureThreadId(findings, idField(event, "session_id"));
    switch (event.type) {
      case "assistant": {
        const content = asRecord(event.message)?.content;
        for (const block of toolUseBlocks(content)) ledger.record(findings, block.id, block.name, claudeCodeToolAccesses(block.name, block.input));
        const text = textOfContent(content);
        if (text !== undefined && text !== "") lastAssistantText = text;
        return;
      }
      case "user": {
        const ids = toolResultIds(asRecord(event.message)?.content);
        if (ids.length === 1) ledger.fillReadBytes(findings, ids[0], claudeCodeReadBytes(event.tool_use_result));
        return;
      }
      case "tool_call": {
        // Cursor CLI: `started` and `completed` events per call; the completed read carries its content.
        const call = cursorToolAccesses(asRecord(event.tool_call));
        if (!call) return;
        const id = asString(event.call_id);
        ledger.record(findings, id, call.tool, call.accesses);
        if (event.subtype === "completed") ledger.fillReadBytes(findings, id, call.readBytes);
        return;
      }
      case "result": {
        findings.terminal = true;
        findings.text = asString(event.result) ?? lastAssistantText ?? null;
        setTurnUsage(findings, normalizeClaudeCodeUsage(event, backend));
        const subtype = asString(event.subtype);
        if (event.is_error === true || (subtype !== undefined && subtype !== "success")) findings.inBandError = resultError(event);
        return;
      }
      default:
        return;
    }
  });
}
