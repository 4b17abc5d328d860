import { addStepUsage, asArray, asRecord, asString, createJsonLineParser, errorMessage, idField, type Loose, type StreamParser } from "../kit/index.js";
import { createToolLedger, toolAccessesFrom, type StreamFindings, type ToolAccessTable, type ToolFileAccess } from "../kit/index.js";
import { normalizeCopilotUsage } from "./copilot-usage.js";

/** Copilot CLI (≥ 1.0.49) says a session is gone with "No session, task, or name matched '<id>'." and exit code 1. */
export const COPILOT_RESUME_FAILURE = /no session, task, or name matched|session .*not found/i;

const COPILOT_TOOLS: ToolAccessTable = {
  tools: {
    view: "read",
    read: "read",
    create: "write",
    write: "write",
    edit: "edit",
    str_replace: "edit",
    insert: "edit",
    str_replace_editor: (args) => (args?.command === "view" ? "read" : "edit"),
    grep: "search",
    glob: "search",
    rg: "search",
    bash: "shell",
    shell: "shell",
  },
  pathFields: ["path", "file_path"],
  contentFields: ["file_text", "content"],
};

/**
 * The file accesses of one Copilot CLI tool call (`name`/`toolName`, `arguments`): `view`
 * (`path`), `create` (`path`, `file_text` — its bytes), `edit`/`str_replace` (`path`),
 * `str_replace_editor` (its `command`), `grep`/`glob` (`path`, else `.`) and `bash`/`shell` (read
 * from the `command`).
 */
export function copilotToolAccesses(tool: string, args: Loose | undefined): ToolFileAccess[] {
  return toolAccessesFrom(COPILOT_TOOLS, tool, args);
}

/**
 * Parser of `copilot -p … --output-format json` (observed, not officially documented): the last
 * `assistant.message` is the answer and each may carry `outputTokens` (summed; builds before
 * 1.0.102 report only these on stdout, 1.0.102 none: see `readCopilotSessionUsage`); tool calls
 * come as `tool.execution_start` events or as an `assistant.message`'s `toolRequests` (counted
 * once per `toolCallId`, see {@link copilotToolAccesses}); the terminal `result` event carries
 * `sessionId` and `exitCode` (non-zero is an in-band error, with the message of the last
 * `session.error` — or `session.warning` — event: Copilot's own words). The thread id is known
 * from the start when the adapter assigned it (`--session-id`); the `result`'s `sessionId` is
 * authoritative.
 */
export function createCopilotParser(assignedThreadId: string | null = null): StreamParser {
  // A call shows both as a message's tool request and as its execution start: counted once.
  const ledger = createToolLedger({ countOnce: true });
  let lastError: string | undefined;
  let lastWarning: string | undefined;
  const toolCall = (findings: StreamFindings, id: string | undefined, tool: string, args: Loose | undefined) =>
    ledger.record(findings, id, tool, copilotToolAccesses(tool, args));
  const parser = createJsonLineParser((event, findings) => {
    const data = asRecord(event.data);
    switch (event.type) {
      case "assistant.message": {
        const content = asString(data?.content);
        if (content !== undefined && content !== "") findings.text = content;
        addStepUsage(findings, normalizeCopilotUsage(data));
        for (const request of asArray(data?.toolRequests).map((entry) => asRecord(entry))) {
          if (request) toolCall(findings, asString(request.toolCallId), asString(request.name) ?? "tool", asRecord(request.arguments));
        }
        return;
      }
      case "tool.execution_start":
        toolCall(findings, asString(data?.toolCallId), asString(data?.toolName) ?? "tool", asRecord(data?.arguments));
        return;
      case "session.error":
      case "error":
        lastError = errorMessage(data) ?? errorMessage(event) ?? lastError;
        return;
      case "session.warning":
        lastWarning = errorMessage(data) ?? lastWarning;
        return;
      case "result": {
        findings.terminal = true;
        findings.threadId = idField(event, "sessionId") ?? findings.threadId;
        const exitCode = event.exitCode;
        if (typeof exitCode === "number" && exitCode !== 0) {
          const said = lastError ?? lastWarning;
          findings.inBandError = said ? `${said} (exit code ${exitCode})` : `copilot reported exit code ${exitCode}`;
        }
        return;
      }
      default:
        return;
    }
  });
  parser.findings().threadId = assignedThreadId;
  return parser;
}
