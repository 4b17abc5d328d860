import { createJsonLineParser, type StreamParser } from "../kit/index.js";
import { addStepUsage, asRecord, asString, captureThreadId, idField, textOfContent } from "../kit/index.js";
import { normalizePiUsage } from "./pi-usage.js";

/**
 * pi says a thread is gone with "No session found matching '<id>'" (stderr, exit 1). A session
 * of another project makes it ask "Fork this session into current directory?" on stdin, which
 * is closed, so it prints "Aborted." and exits 0 — also a failed resume.
 */
export const PI_RESUME_FAILURE = /no session found matching|session found in different project|^aborted\.?$/im;

/**
 * Parser of `pi --mode json`: the `session` header carries the thread id (first line); each
 * assistant `message_end` carries one step's usage (summed) and its text (the last non-empty one
 * is the answer); `stopReason` `error`/`aborted` on the last assistant message is an in-band
 * error (pi exits 0 anyway); `agent_end` is the terminal event. Other events are ignored.
 */
export function createPiParser(): StreamParser {
  return createJsonLineParser((event, findings) => {
    switch (event.type) {
      case "session":
        captureThreadId(findings, idField(event, "id"));
        return;
      case "message_end": {
        const message = asRecord(event.message);
        if (message?.role !== "assistant") return;
        addStepUsage(findings, normalizePiUsage(message.usage));
        const text = textOfContent(message.content);
        if (text !== undefined && text !== "") findings.text = text;
        const stopReason = asString(message.stopReason);
        findings.inBandError =
          stopReason === "error" || stopReason === "aborted" ? (asString(message.errorMessage) ?? `request ${stopReason}`) : null;
        return;
      }
      case "agent_end":
        findings.terminal = true;
        return;
      default:
        return;
    }
  });
}
