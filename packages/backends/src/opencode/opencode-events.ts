import {
  addStepUsage,
  asRecord,
  asString,
  captureThreadId,
  contentBytes,
  createJsonLineParser,
  errorMessage,
  fileAccessOfCommand,
  idField,
  recordToolCall,
  type Loose,
  type StreamParser,
  type ToolFileAccess,
} from "../kit/index.js";
import { normalizeOpenCodeUsage } from "./opencode-usage.js";

/**
 * OpenCode says a session is gone with `NotFoundError … Session not found: ses_…` on stderr and
 * exits 0 without printing a single event (anomalyco/opencode#27559); an id that is not a `ses_`
 * id also exits 0 silently (#20799).
 */
export const OPENCODE_RESUME_FAILURE = /session not found|notfounderror/i;

/**
 * The file accesses of one OpenCode tool part (`tool_use`: `part.tool`, `part.state.input`):
 * `read` (`filePath`), `write` (`filePath`, `content` — its bytes), `edit`/`patch`
 * (`filePath`), `grep`/`glob`/`list` (`path`, else `.`) and `bash` (read from the `command`).
 * A read's output is line-numbered, so its bytes are not the file's and are left out.
 */
export function openCodeToolAccesses(tool: string, input: Loose | undefined): ToolFileAccess[] {
  const path = asString(input?.filePath) ?? asString(input?.path);
  switch (tool) {
    case "read":
      return path ? [{ op: "read", path }] : [];
    case "write": {
      const bytes = contentBytes(input?.content);
      return path ? [{ op: "write", path, ...(bytes === undefined ? {} : { bytes }) }] : [];
    }
    case "edit":
    case "patch":
    case "multiedit":
      return path ? [{ op: "write", path }] : [];
    case "grep":
    case "glob":
    case "list":
      return [{ op: "search", path: path ?? "." }];
    case "bash":
      return fileAccessOfCommand(asString(input?.command) ?? "");
    default:
      return [];
  }
}

/**
 * Parser of `opencode run --format json`: `sessionID` on every event; `text` parts make up the
 * answer (the text of the last step that had any); `tool_use` parts are the tool calls (see
 * {@link openCodeToolAccesses}); each `step_finish` carries one step's tokens and cost (summed)
 * and marks the stream complete — OpenCode has no terminal event, the process exit ends the turn;
 * an `error` event is an in-band error (OpenCode exits 0). OpenCode's session-title call (made on
 * a session's first turn when it has no title) never appears in the stream: its usage cannot be
 * recovered, so the adapter names the session itself (`--title`) and the call is not made.
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
      case "tool_use": {
        const part = asRecord(event.part);
        const tool = asString(part?.tool) ?? "tool";
        recordToolCall(findings, tool, openCodeToolAccesses(tool, asRecord(asRecord(part?.state)?.input)));
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
