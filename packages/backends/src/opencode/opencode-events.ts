import { addStepUsage, asNumber, asRecord, asString, captureThreadId, createJsonLineParser, errorMessage, idField, recordToolCall, type Loose, type StreamParser } from "../kit/index.js";
import { toolAccessesFrom, type ToolAccessTable, type ToolFileAccess } from "../kit/index.js";
import { normalizeOpenCodeUsage } from "./opencode-usage.js";

/**
 * OpenCode says a session is gone with `NotFoundError … Session not found: ses_…` on stderr and
 * exits 0 without printing a single event (anomalyco/opencode#27559); an id that is not a `ses_`
 * id also exits 0 silently (#20799).
 */
export const OPENCODE_RESUME_FAILURE = /session not found|notfounderror/i;

const OPENCODE_TOOLS: ToolAccessTable = {
  tools: { read: "read", write: "write", edit: "edit", patch: "edit", multiedit: "edit", grep: "search", glob: "search", list: "search", bash: "shell" },
  pathFields: ["filePath", "path"],
};

/**
 * The file accesses of one OpenCode tool part (`tool_use`: `part.tool`, `part.state.input`):
 * `read` (`filePath`), `write` (`filePath`, `content` — its bytes), `edit`/`patch`
 * (`filePath`), `grep`/`glob`/`list` (`path`, else `.`) and `bash` (read from the `command`).
 * A read's output is line-numbered, so its bytes are not the file's and are left out.
 */
export function openCodeToolAccesses(tool: string, input: Loose | undefined): ToolFileAccess[] {
  return toolAccessesFrom(OPENCODE_TOOLS, tool, input);
}

/**
 * The message of an OpenCode `error` event, with the provider's HTTP status when it names one
 * (`error.data.statusCode`): OpenCode 1.18 passes on only the provider's message (`fake-busy`),
 * so without the status a 529 or a 500 would not read as transient (`isTransientFailure`).
 */
function openCodeErrorMessage(error: unknown): string {
  const message = errorMessage(error) ?? "error";
  const status = asNumber(asRecord(asRecord(error)?.data)?.statusCode);
  return status === undefined ? message : `${message} (HTTP ${status})`;
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
        findings.inBandError = openCodeErrorMessage(event.error);
        return;
      default:
        return;
    }
  });
}
