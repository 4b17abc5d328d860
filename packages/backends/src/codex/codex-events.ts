import { createJsonLineParser, type StreamParser } from "../kit/index.js";
import { asRecord, asString, captureThreadId, errorMessage, idField, setTurnUsage } from "../kit/index.js";
import { normalizeCodexUsage } from "./codex-usage.js";

/**
 * Codex says a thread is gone with "no rollout found for thread id …" (codex-cli 0.130), "state db
 * missing rollout path for thread …" (0.99) or "No saved session found with ID …", exit code 1.
 */
export const CODEX_RESUME_FAILURE = new RegExp(
  [
    "unknown (session|thread)",
    "(session|thread|conversation) .*not found",
    "missing rollout path for thread",
    "state db missing rollout path",
    "no rollout found for thread id",
    "no saved session found",
  ].join("|"),
  "i",
);

/**
 * Parser of `codex exec --json`: `thread.started.thread_id` (first line, also on resume), the last
 * `item.completed` of type `agent_message` as the text, `turn.completed.usage` as the usage and the
 * terminal event; `turn.failed` is an in-band error, and so is a top-level `error` unless the turn
 * still completes (Codex reports reconnect attempts that way). `error` *items* are warnings.
 */
export function createCodexParser(): StreamParser {
  let transientError = false;
  return createJsonLineParser((event, findings) => {
    switch (event.type) {
      case "thread.started":
        captureThreadId(findings, idField(event, "thread_id"));
        return;
      case "item.completed": {
        const item = asRecord(event.item);
        const text = asString(item?.text);
        if (item?.type === "agent_message" && text !== undefined) findings.text = text;
        return;
      }
      case "turn.completed":
        findings.terminal = true;
        setTurnUsage(findings, normalizeCodexUsage(event));
        if (transientError) {
          findings.inBandError = null;
          transientError = false;
        }
        return;
      case "turn.failed":
        findings.terminal = true;
        findings.inBandError = errorMessage(event.error) ?? "turn failed";
        transientError = false;
        return;
      case "error":
        if (findings.inBandError === null) {
          findings.inBandError = errorMessage(event) ?? "error";
          transientError = true;
        }
        return;
      default:
        return;
    }
  });
}
