import { createJsonLineParser, type StreamParser } from "../kit/index.js";
import { asRecord, asString, captureThreadId, errorMessage, idField, setTurnUsage } from "../kit/index.js";
import { normalizeGeminiUsage } from "./gemini-usage.js";

/**
 * Gemini CLI says a session is gone with `Error resuming session: Invalid session identifier "…"`
 * or "No previous sessions found for this project." on stderr, exit code 42.
 */
export const GEMINI_RESUME_FAILURE = /invalid session identifier|no previous sessions found|error resuming session/i;

/**
 * Parser of `gemini -p … --output-format stream-json`: `init.session_id` is the thread id; the
 * assistant `message` events after the last tool call make up the answer (deltas are
 * concatenated); the terminal `result` carries `status` (anything but `success` is an in-band
 * error, with `error.message`) and `stats` (usage). `error` events with severity `error` are kept
 * for the message when the result fails.
 */
export function createGeminiParser(): StreamParser {
  let answer = "";
  let lastError: string | undefined;
  return createJsonLineParser((event, findings) => {
    switch (event.type) {
      case "init":
        captureThreadId(findings, idField(event, "session_id"));
        return;
      case "message": {
        const content = asString(event.content);
        if (event.role !== "assistant" || content === undefined) return;
        answer = event.delta === true ? answer + content : content;
        findings.text = answer;
        return;
      }
      case "tool_use":
        answer = "";
        return;
      case "error":
        if (event.severity !== "warning") lastError = errorMessage(event) ?? lastError;
        return;
      case "result": {
        findings.terminal = true;
        setTurnUsage(findings, normalizeGeminiUsage(event));
        const status = asString(event.status);
        if (status !== "success") findings.inBandError = errorMessage(asRecord(event.error)) ?? lastError ?? `result status ${status ?? "missing"}`;
        return;
      }
      default:
        return;
    }
  });
}
