import { addStepUsage, asArray, asRecord, asString, captureThreadId, createJsonLineParser, idField, textOfContent, type Loose, type StreamParser } from "../kit/index.js";
import { createToolLedger, toolAccessesFrom, type ToolAccessTable, type ToolFileAccess } from "../kit/index.js";
import { normalizePiUsage } from "./pi-usage.js";

/**
 * pi says a thread is gone with "No session found matching '<id>'" (stderr, exit 1). A session
 * of another project makes it ask "Fork this session into current directory?" on stdin, which
 * is closed, so it prints "Aborted." and exits 0 — also a failed resume.
 */
export const PI_RESUME_FAILURE = /no session found matching|session found in different project|^aborted\.?$/im;

const PI_TOOLS: ToolAccessTable = {
  tools: { read: "read", write: "write", edit: "edit", grep: "search", find: "search", ls: "search", bash: "shell" },
  pathFields: ["path", "file_path"],
};

/**
 * The file accesses of one pi tool call (`tool_execution_start`: `toolName`, `args`): `read`
 * (`path`), `write` (`path`, `content` — its bytes), `edit` (`path`), `grep` and `find` (`path`,
 * else `.`), `ls` (`path`) and `bash` (read from the `command`).
 */
export function piToolAccesses(tool: string, args: Loose | undefined): ToolFileAccess[] {
  return toolAccessesFrom(PI_TOOLS, tool, args);
}

/** The bytes of the text a tool returned (`result.content[]` text blocks). */
function resultTextBytes(result: unknown): number | undefined {
  const texts = asArray(asRecord(result)?.content)
    .map((block) => asRecord(block))
    .filter((block) => block?.type === "text" && typeof block.text === "string")
    .map((block) => block!.text as string);
  return texts.length > 0 ? Buffer.byteLength(texts.join("")) : undefined;
}

/**
 * Parser of `pi --mode json`: the `session` header carries the thread id (first line); each
 * assistant `message_end` carries one step's usage (summed) and its text (the last non-empty one
 * is the answer); `tool_execution_start` events are the tool calls (`read`, `write`, `edit`,
 * `grep`, `find`, `ls`, `bash`: see {@link piToolAccesses}) and a read's `tool_execution_end`
 * gives its bytes; `stopReason` `error`/`aborted` on the last assistant message is an in-band
 * error (pi exits 0 anyway); `agent_end` is the terminal event. Other events are ignored.
 */
export function createPiParser(): StreamParser {
  // Only a `read`'s result text is the file's bytes.
  const ledger = createToolLedger({ readBytesFrom: (tool) => tool === "read" });
  return createJsonLineParser((event, findings) => {
    switch (event.type) {
      case "tool_execution_start": {
        const tool = asString(event.toolName) ?? "tool";
        ledger.record(findings, asString(event.toolCallId), tool, piToolAccesses(tool, asRecord(event.args)));
        return;
      }
      case "tool_execution_end":
        ledger.fillReadBytes(findings, asString(event.toolCallId), event.isError === true ? undefined : resultTextBytes(event.result));
        return;
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
