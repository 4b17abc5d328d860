import {
  asRecord,
  asString,
  claudeCodeToolAccesses,
  createJsonLineParser,
  errorMessage,
  idField,
  normalizeClaudeCodeUsage,
  recordToolCall,
  setTurnUsage,
  type StreamParser,
} from "../kit/index.js";

/**
 * Grok Build's `-r` "errors if not found"; its exact message is not documented, so the usual
 * "session … not found" family is matched (an `error` event or stderr, non-zero exit).
 */
export const GROK_RESUME_FAILURE = /(session|conversation|thread)\b.*\bnot found|no (such )?session|unknown session/i;

/**
 * Parser of Grok Build's `--output-format streaming-json` (observed on grok 0.2.101): `text`
 * events carry answer deltas in `data` (joined with ""), `thought` events reasoning (ignored);
 * the terminal `end` event carries `sessionId`, `stopReason` (`Cancelled` is a failure), a
 * snake_case `usage` and `total_cost_usd`; `error` and `max_turns_reached` are in-band errors.
 * No tool event was recorded (Grok Build is not on the npm registry): `tool_use`/`tool_call`
 * events are read leniently (`name`/`tool`, `input`/`args`, Claude Code's tool names).
 * The thread id is known from the start when the adapter assigned it (`-s`).
 */
export function createGrokParser(assignedThreadId: string | null = null): StreamParser {
  let answer = "";
  const parser = createJsonLineParser((event, findings) => {
    switch (event.type) {
      case "text": {
        const delta = asString(event.data);
        if (delta === undefined) return;
        answer += delta;
        findings.text = answer;
        return;
      }
      case "end": {
        findings.terminal = true;
        findings.threadId = idField(event, "sessionId") ?? findings.threadId;
        setTurnUsage(findings, normalizeClaudeCodeUsage(event, "grok"));
        const stopReason = asString(event.stopReason);
        if (stopReason !== undefined && /cancel/i.test(stopReason)) findings.inBandError ??= `turn stopped: ${stopReason}`;
        return;
      }
      case "tool_use":
      case "tool_call": {
        const tool = asString(event.name) ?? asString(event.tool) ?? "tool";
        recordToolCall(findings, tool, claudeCodeToolAccesses(tool, asRecord(event.input) ?? asRecord(event.args)));
        return;
      }
      case "error":
        findings.inBandError = errorMessage(event) ?? "error";
        return;
      case "max_turns_reached":
        findings.inBandError ??= "the turn reached its maximum number of model turns";
        return;
      default:
        return;
    }
  });
  parser.findings().threadId = assignedThreadId;
  return parser;
}
