import { createJsonLineParser, type StreamParser } from "../kit/index.js";
import { addStepUsage, asRecord, asString, captureThreadId, errorMessage, idField } from "../kit/index.js";
import { normalizeOpenCodeUsage } from "./opencode-usage.js";

/**
 * OpenCode says a session is gone with `NotFoundError … Session not found: ses_…` on stderr and
 * exits 0 without printing a single event (anomalyco/opencode#27559); an id that is not a `ses_`
 * id also exits 0 silently (#20799).
 */
export const OPENCODE_RESUME_FAILURE = /session not found|notfounderror/i;

/**
 * Parser of `opencode run --format json`: `sessionID` on every event; `text` parts make up the
 * answer (the text of the last step that had any); each `step_finish` carries one step's tokens
 * and cost (summed) and marks the stream complete — OpenCode has no terminal event, the process
 * exit ends the turn; an `error` event is an in-band error (OpenCode exits 0).
 */
export function createOpenCodeParser(): StreamParser {
  let stepText = "";
  return createJsonLineParser((event, findings) => {
    captureThreadId(findings, idField(event, "sessionID"));
    switch (event.type) {
      case "step_start":
        stepText = "";
        return;
      case "text": {
        const text = asString(asRecord(event.part)?.text);
        if (text === undefined) return;
        stepText += text;
        findings.text = stepText;
        return;
      }
      case "step_finish":
        findings.terminal = true;
        addStepUsage(findings, normalizeOpenCodeUsage(event));
        return;
      case "error":
        findings.inBandError = errorMessage(event.error) ?? "error";
        return;
      default:
        return;
    }
  });
}
