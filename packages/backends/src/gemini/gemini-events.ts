import {
  asArray,
  asRecord,
  asString,
  captureThreadId,
  contentBytes,
  createJsonLineParser,
  errorMessage,
  fileAccessOfCommand,
  idField,
  recordToolCall,
  setTurnUsage,
  type Loose,
  type StreamParser,
  type ToolFileAccess,
} from "../kit/index.js";
import { normalizeGeminiUsage } from "./gemini-usage.js";

/**
 * Gemini CLI says a session is gone with `Error resuming session: Invalid session identifier "…"`
 * or "No previous sessions found for this project." on stderr, exit code 42.
 */
export const GEMINI_RESUME_FAILURE = /invalid session identifier|no previous sessions found|error resuming session/i;

/**
 * The file accesses of one Gemini CLI tool call (`tool_use`: `tool_name`, `parameters`):
 * `read_file` (`absolute_path`/`file_path`/`path`), `read_many_files` (`paths`), `write_file`
 * (`file_path`, `content` — its bytes), `replace`/`edit` (`file_path`), `glob`,
 * `search_file_content`/`grep` and `list_directory` (`path`, else `.`), and
 * `run_shell_command` (read from the `command`).
 */
export function geminiToolAccesses(tool: string, parameters: Loose | undefined): ToolFileAccess[] {
  const path = asString(parameters?.absolute_path) ?? asString(parameters?.file_path) ?? asString(parameters?.path) ?? asString(parameters?.dir_path);
  switch (tool) {
    case "read_file":
      return path ? [{ op: "read", path }] : [];
    case "read_many_files":
      return asArray(parameters?.paths)
        .filter((entry): entry is string => typeof entry === "string")
        .map((entry) => ({ op: "read" as const, path: entry }));
    case "write_file": {
      const bytes = contentBytes(parameters?.content);
      return path ? [{ op: "write", path, ...(bytes === undefined ? {} : { bytes }) }] : [];
    }
    case "replace":
    case "edit":
      return path ? [{ op: "write", path }] : [];
    case "glob":
    case "search_file_content":
    case "grep":
    case "list_directory":
      return [{ op: "search", path: path ?? asString(parameters?.pattern) ?? "." }];
    case "run_shell_command":
    case "Bash":
      return fileAccessOfCommand(asString(parameters?.command) ?? "");
    default:
      return [];
  }
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
  const reads = new Map<string, number>();
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
        const before = findings.fileAccess.length;
        recordToolCall(findings, tool, geminiToolAccesses(tool, asRecord(event.parameters)));
        const id = asString(event.tool_id);
        if (id !== undefined && tool === "read_file" && findings.fileAccess.length > before) reads.set(id, before);
        return;
      }
      case "tool_result": {
        const index = reads.get(asString(event.tool_id) ?? "");
        const access = index === undefined ? undefined : findings.fileAccess[index];
        const bytes = event.status === "success" ? contentBytes(event.output) : undefined;
        if (access && bytes !== undefined) access.bytes = bytes;
        return;
      }
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
