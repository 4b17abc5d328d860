import {
  asArray,
  asRecord,
  asString,
  captureThreadId,
  createJsonLineParser,
  errorMessage,
  idField,
  recordToolCall,
  setTurnUsage,
  textOfContent,
  type StreamFindings,
  type StreamParser,
} from "../kit/index.js";
import { normalizeClaudeCodeUsage } from "./claude-code-usage.js";
import { claudeCodeReadBytes, claudeCodeToolAccesses, cursorToolAccesses, toolResultIds, toolUseBlocks } from "./claude-code-tools.js";

/**
 * Claude Code says a thread is gone with "No conversation found with session ID: …" (in the
 * `result` event's `errors`, or on stderr in text mode).
 */
export const CLAUDE_CODE_RESUME_FAILURE = /no conversation found with session id|(session|conversation) .*not found/i;

function resultError(event: Readonly<Record<string, unknown>>): string {
  const errors = asArray(event.errors)
    .map((entry) => errorMessage(entry))
    .filter((entry): entry is string => entry !== undefined);
  if (errors.length > 0) return errors.join("; ");
  return errorMessage(event.error) ?? asString(event.result) ?? `result ${asString(event.subtype) ?? "error"}`;
}

/** Tool calls seen so far, by id: each is counted once, and a read's bytes filled in from its result. */
interface ToolLedger {
  seen: Set<string>;
  /** Index in `findings.fileAccess` of the read each tool id made. */
  reads: Map<string, number>;
}

function recordCall(findings: StreamFindings, ledger: ToolLedger, id: string | undefined, tool: string, accesses: Parameters<typeof recordToolCall>[2]): void {
  if (id !== undefined) {
    if (ledger.seen.has(id)) return;
    ledger.seen.add(id);
  }
  const before = findings.fileAccess.length;
  recordToolCall(findings, tool, accesses);
  const readIndex = findings.fileAccess.findIndex((access, index) => index >= before && access.op === "read");
  if (id !== undefined && readIndex >= 0) ledger.reads.set(id, readIndex);
}

function fillReadBytes(findings: StreamFindings, ledger: ToolLedger, id: string | undefined, bytes: number | undefined): void {
  if (id === undefined || bytes === undefined) return;
  const index = ledger.reads.get(id);
  const access = index === undefined ? undefined : findings.fileAccess[index];
  if (access && access.bytes === undefined) access.bytes = bytes;
}

/**
 * Parser of the Claude Code `stream-json` family (`-p --output-format stream-json --verbose`),
 * also spoken by Qoder CLI and Cursor CLI: `session_id` on every line (captured from the first,
 * `system/init`), `assistant` messages (their `tool_use` blocks are the tool calls: `Read`,
 * `Write`, `Edit`, `Grep`, `Glob`, `Bash` … — see `claudeCodeToolAccesses`), `user` messages
 * (a `Read`'s `tool_use_result` gives the bytes read), Cursor's `tool_call` events, and a
 * terminal `result` event with the final text, `is_error`/`subtype`, `usage` and
 * `total_cost_usd`. Other event types are ignored.
 */
export function createClaudeStyleParser(backend = "claude-code"): StreamParser {
  let lastAssistantText: string | undefined;
  const ledger: ToolLedger = { seen: new Set(), reads: new Map() };
  return createJsonLineParser((event, findings) => {
    captureThreadId(findings, idField(event, "session_id"));
    switch (event.type) {
      case "assistant": {
        const content = asRecord(event.message)?.content;
        for (const block of toolUseBlocks(content)) recordCall(findings, ledger, block.id, block.name, claudeCodeToolAccesses(block.name, block.input));
        const text = textOfContent(content);
        if (text !== undefined && text !== "") lastAssistantText = text;
        return;
      }
      case "user": {
        const ids = toolResultIds(asRecord(event.message)?.content);
        if (ids.length === 1) fillReadBytes(findings, ledger, ids[0], claudeCodeReadBytes(event.tool_use_result));
        return;
      }
      case "tool_call": {
        // Cursor CLI: `started` and `completed` events per call; the completed read carries its content.
        const call = cursorToolAccesses(asRecord(event.tool_call));
        if (!call) return;
        const id = asString(event.call_id);
        recordCall(findings, ledger, id, call.tool, call.accesses);
        if (event.subtype === "completed") fillReadBytes(findings, ledger, id, call.readBytes);
        return;
      }
      case "result": {
        findings.terminal = true;
        findings.text = asString(event.result) ?? lastAssistantText ?? null;
        setTurnUsage(findings, normalizeClaudeCodeUsage(event, backend));
        const subtype = asString(event.subtype);
        if (event.is_error === true || (subtype !== undefined && subtype !== "success")) findings.inBandError = resultError(event);
        return;
      }
      default:
        return;
    }
  });
}

/** Parser of Claude Code's `stream-json` output. */
export function createClaudeCodeParser(): StreamParser {
  return createClaudeStyleParser("claude-code");
}
