import { UsageSchema, emptyUsage, type JsonObject, type Usage } from "@keel/core";
import {
  asArray,
  asRecord,
  asString,
  captureThreadId,
  createJsonLineParser,
  errorMessage,
  fileAccessOfCommand,
  idField,
  recordToolCall,
  subtractUsage,
  type Loose,
  type StreamFindings,
  type StreamParser,
} from "../kit/index.js";
import { normalizeCodexUsage } from "./codex-usage.js";

/** The key of `BackendTurnResult.resumeState` under which Codex's running total is kept. */
const RUNNING_TOTAL = "codexRunningTotal";

/**
 * The thread's running total kept with the previous turn (`resumeState.codexRunningTotal`), or
 * `null` when there is none or it is not a usage.
 */
export function codexRunningTotal(resumeState: JsonObject | null | undefined): Usage | null {
  const parsed = UsageSchema.safeParse(resumeState?.[RUNNING_TOTAL]);
  return parsed.success ? parsed.data : null;
}

/**
 * This turn's usage from the running total Codex reported (`codex exec resume` reports the
 * thread's total, not the turn's: real-clis.md, turn 1 100/5, the resumed turn's two calls of
 * 100/5 reported as 300/15): on a fresh turn the total is the turn's; on a resumed turn it is the
 * difference from the previous total, and unknown (`null`) without one — never an over-count.
 * Pure.
 */
export function codexTurnUsage(runningTotal: Usage, resuming: boolean, previousTotal: Usage | null): Usage {
  if (!resuming) return runningTotal;
  return previousTotal === null ? emptyUsage() : subtractUsage(runningTotal, previousTotal);
}

/** Records the tool call of one completed Codex item (commands, file changes, MCP calls, searches). */
function recordItem(findings: StreamFindings, item: Loose): void {
  switch (item.type) {
    case "command_execution": {
      const command = asString(item.command) ?? asArray(item.command).filter((part): part is string => typeof part === "string");
      recordToolCall(findings, "exec_command", fileAccessOfCommand(command));
      return;
    }
    case "file_change": {
      const changes = asArray(item.changes).map((change) => asRecord(change));
      const paths = changes.map((change) => asString(change?.path)).filter((path): path is string => path !== undefined);
      recordToolCall(findings, "apply_patch", paths.map((path) => ({ op: "write" as const, path })));
      return;
    }
    case "mcp_tool_call":
    case "web_search":
      recordToolCall(findings, asString(item.tool) ?? String(item.type));
      return;
    default:
      return;
  }
}

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

/** What the Codex parser knows of the turn: whether it resumes, and the previous turn's `resumeState`. */
export interface CodexParserOptions {
  /** The thread being resumed, or `null` for a fresh turn. */
  resumeThreadId?: string | null;
  /** The `resumeState` returned with the thread's previous turn. */
  resumeState?: JsonObject | null;
}

/**
 * Parser of `codex exec --json`: `thread.started.thread_id` (first line, also on resume), the
 * `agent_message` items as the text (all of them, in order), `turn.completed.usage` as the
 * thread's running total (turned into this turn's figure with {@link codexTurnUsage}, and kept as
 * `resumeState` for the next turn) and the terminal event; `command_execution` items are tool calls
 * (their reads and searches read from the command), `file_change` items writes; `turn.failed` is an
 * in-band error, and so is a top-level `error` unless the turn still completes (Codex reports
 * reconnect attempts that way). `error` *items* are warnings.
 */
export function createCodexParser(options: CodexParserOptions = {}): StreamParser {
  const resuming = (options.resumeThreadId ?? null) !== null;
  const previousTotal = codexRunningTotal(options.resumeState);
  const texts: string[] = [];
  let transientError = false;
  return createJsonLineParser((event, findings) => {
    switch (event.type) {
      case "thread.started":
        captureThreadId(findings, idField(event, "thread_id"));
        return;
      case "item.completed": {
        const item = asRecord(event.item);
        if (!item) return;
        const text = asString(item.text);
        if (item.type === "agent_message" && text !== undefined && text !== "") {
          texts.push(text);
          findings.text = texts.join("\n\n");
        } else recordItem(findings, item);
        return;
      }
      case "turn.completed": {
        findings.terminal = true;
        const total = normalizeCodexUsage(event);
        if (total.isErr()) {
          findings.corruptReason ??= total.error.message;
        } else {
          findings.usage = codexTurnUsage(total.value, resuming, previousTotal);
          findings.resumeState = { [RUNNING_TOTAL]: { ...total.value } };
        }
        if (transientError) {
          findings.inBandError = null;
          transientError = false;
        }
        return;
      }
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
