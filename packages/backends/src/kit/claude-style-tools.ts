import { asArray, asRecord, asString, type Loose } from "./loose-json.js";
import { contentBytes, fileAccessOfCommand, type ToolFileAccess } from "./tool-calls.js";

/**
 * The file accesses of one Claude Code tool call (`tool_use` block: `name`, `input`): `Read`
 * (`file_path`), `Write` (`file_path`, `content` — its bytes), `Edit`/`MultiEdit`
 * (`file_path`), `NotebookRead`/`NotebookEdit` (`notebook_path`), `Grep` (`path`, else the
 * `glob` or `.`), `Glob` (`path`, else its `pattern`), `LS` (`path`) and `Bash` (read from the
 * `command`). Other tools (Task, WebFetch, TodoWrite, MCP tools …) touch no file here.
 */
export function claudeCodeToolAccesses(name: string, input: Loose | undefined): ToolFileAccess[] {
  const path = asString(input?.file_path) ?? asString(input?.notebook_path) ?? asString(input?.path);
  switch (name) {
    case "Read":
    case "NotebookRead":
      return path ? [{ op: "read", path }] : [];
    case "Write": {
      const bytes = contentBytes(input?.content);
      return path ? [{ op: "write", path, ...(bytes === undefined ? {} : { bytes }) }] : [];
    }
    case "Edit":
    case "MultiEdit":
    case "NotebookEdit":
      return path ? [{ op: "write", path }] : [];
    case "Grep":
      return [{ op: "search", path: path ?? asString(input?.glob) ?? "." }];
    case "Glob":
      return [{ op: "search", path: path ?? asString(input?.pattern) ?? "." }];
    case "LS":
      return path ? [{ op: "search", path }] : [];
    case "Bash":
      return fileAccessOfCommand(asString(input?.command) ?? "");
    default:
      return [];
  }
}

/**
 * The bytes a Claude Code `Read` returned, from the `user` event's `tool_use_result`
 * (`{ type: "text", file: { filePath, content } }`): the raw text read, without line numbers.
 */
export function claudeCodeReadBytes(toolUseResult: unknown): number | undefined {
  const file = asRecord(asRecord(toolUseResult)?.file);
  return contentBytes(file?.content);
}

/** The `tool_use` blocks of an Anthropic-style message content: `{ id, name, input }`. */
export function toolUseBlocks(content: unknown): { id: string | undefined; name: string; input: Loose | undefined }[] {
  return asArray(content)
    .map((block) => asRecord(block))
    .filter((block): block is Loose => block !== undefined && block.type === "tool_use" && typeof block.name === "string")
    .map((block) => ({ id: asString(block.id), name: block.name as string, input: asRecord(block.input) }));
}

/** The `tool_use_id`s of the `tool_result` blocks of a message content. */
export function toolResultIds(content: unknown): string[] {
  return asArray(content)
    .map((block) => asRecord(block))
    .filter((block): block is Loose => block !== undefined && block.type === "tool_result")
    .map((block) => asString(block.tool_use_id))
    .filter((id): id is string => id !== undefined);
}

/** Cursor CLI's `tool_call` event names its tool as the key of `tool_call` (`readToolCall`, …). */
export function cursorToolAccesses(toolCall: Loose | undefined): { tool: string; accesses: ToolFileAccess[]; readBytes?: number } | undefined {
  const [key, value] = Object.entries(toolCall ?? {})[0] ?? [];
  if (key === undefined) return undefined;
  const call = asRecord(value);
  const args = asRecord(call?.args);
  const path = asString(args?.path) ?? asString(args?.filePath);
  const kind = key.replace(/ToolCall$/, "");
  const success = asRecord(asRecord(call?.result)?.success);
  switch (kind) {
    case "read": {
      const readBytes = contentBytes(success?.content);
      return { tool: kind, accesses: path ? [{ op: "read", path }] : [], ...(readBytes === undefined ? {} : { readBytes }) };
    }
    case "write": {
      const bytes = contentBytes(args?.fileText);
      return { tool: kind, accesses: path ? [{ op: "write", path, ...(bytes === undefined ? {} : { bytes }) }] : [] };
    }
    case "edit":
    case "delete":
      return { tool: kind, accesses: path ? [{ op: "write", path }] : [] };
    case "grep":
    case "glob":
    case "ls":
      return { tool: kind, accesses: [{ op: "search", path: path ?? asString(args?.pattern) ?? "." }] };
    case "shell":
      return { tool: kind, accesses: fileAccessOfCommand(asString(args?.command) ?? "") };
    default:
      return { tool: kind, accesses: [] };
  }
}
