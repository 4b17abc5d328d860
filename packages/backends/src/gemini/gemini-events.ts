import { asArray, asRecord, asString, captureThreadId, contentBytes, createJsonLineParser, errorMessage, idField, setTurnUsage, type Loose, type StreamParser } from "../kit/index.js";
import { createToolLedger, toolAccessesFrom, type ToolAccessTable, type ToolFileAccess } from "../kit/index.js";
import { normalizeGeminiUsage } from "./gemini-usage.js";

/**
 * Gemini CLI says a session is gone with `Error resuming session: Invalid session identifier "…"`
 * or "No previous sessions found for this project." on stderr, exit code 42.
 */
export const GEMINI_RESUME_FAILURE = /invalid session identifier|no previous sessions found|error resuming session/i;

const GEMINI_TOOLS: ToolAccessTable = {
  tools: {
    read_file: "read",
    write_file: "write",
    replace: "edit",
    edit: "edit",
    glob: "search",
    search_file_content: "search",
    grep: "search",
    list_directory: "search",
    run_shell_command: "shell",
    Bash: "shell",
  },
  pathFields: ["absolute_path", "file_path", "path", "dir_path"],
  searchPatternField: "pattern",
};

/**
 * The file accesses of one Gemini CLI tool call (`tool_use`: `tool_name`, `parameters`):
 * `read_file` (`absolute_path`/`file_path`/`path`), `read_many_files` (`paths`), `write_file`
 * (`file_path`, `content` — its bytes), `replace`/`edit` (`file_path`), `glob`,
 * `search_file_content`/`grep` and `list_directory` (`path`, else `.`), and
 * `run_shell_command` (read from the `command`).
 */
export function geminiToolAccesses(tool: string, parameters: Loose | undefined): ToolFileAccess[] {
  if (tool !== "read_many_files") return toolAccessesFrom(GEMINI_TOOLS, tool, parameters);
  return asArray(parameters?.paths)
    .filter((entry): entry is string => typeof entry === "string")
    .map((entry) => ({ op: "read" as const, path: entry }));
}

/**
 * Parser of `gemini -p … --output-format stream-json`: `init.session_id` is the thread id; every
 * assistant `message` makes up the answer — the text before, between and after tool calls, each
 * part kept (deltas are concatenated within a part); `tool_use` events are the tool calls (see
 * {@link geminiToolAccesses}); the terminal `result` carries `status` (anything but `success` is
 * an in-band error, with `error.message`) and `stats` (usage). `error` events with severity
 * `error` are kept for the message when the result fails.
 */
export function createGeminiParser(): StreamParser {
  const parts: string[] = [];
  let current = "";
  let lastError: string | undefined;
  // Only a `read_file`'s output is the file's bytes (`read_many_files` joins several).
  const ledger = createToolLedger({ readBytesFrom: (tool) => tool === "read_file" });
  const answer = () => [...parts, current].filter((part) => part.trim() !== "").join("\n\n");
  return createJsonLineParser((event, findings) => {
    switch (event.type) {
      case "init":
        captureThreadId(findings, idField(event, "session_id"));
        return;
      case "message": {
        const content = asString(event.content);
        if (event.role !== "assistant" || content === undefined) return;
        current = event.delta === true ? current + content : content;
        findings.text = answer();
        return;
      }
      case "tool_use": {
        // The text so far is kept: a model often explains, calls a tool and then answers.
        if (current !== "") parts.push(current);
        current = "";
        const tool = asString(event.tool_name) ?? "tool";
        ledger.record(findings, asString(event.tool_id), tool, geminiToolAccesses(tool, asRecord(event.parameters)));
        return;
      }
      case "tool_result":
        ledger.fillReadBytes(findings, asString(event.tool_id), event.status === "success" ? contentBytes(event.output) : undefined);
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
