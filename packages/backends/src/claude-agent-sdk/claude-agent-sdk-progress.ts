import type { BackendTurnListener } from "@keel/backend";
import { asRecord, asString, textOfContent } from "../kit/index.js";

/** The `text` progress of one SDK turn, fed every message the query yields: see {@link createClaudeAgentSdkTextProgress}. */
export interface ClaudeAgentSdkTextProgress {
  /** Reads one message the SDK yielded (any type; the ones without text are passed over). */
  observe(message: unknown): void;
}

// Only the main thread's text is the turn's: a subagent's messages carry the Task call's id.
function mainThread(record: Readonly<Record<string, unknown>>): boolean {
  return record.parent_tool_use_id === undefined || record.parent_tool_use_id === null;
}

/**
 * The `text` events of a turn, in the order the SDK shows them:
 *
 * - each `text_delta` of a `stream_event` (the SDK's partial messages, asked for with
 *   `includePartialMessages` when a listener is given) as it arrives — token-level deltas;
 * - an `assistant` message's text only when none of it streamed: the SDK yields the whole
 *   message after its deltas (same API message id: `api_message_id` on the stream events,
 *   `message.id` on the message), and that text is not told twice. A message nothing streamed
 *   (a synthetic one, or a query without partial messages) is told whole;
 * - the result's text (`resultText`, read when the `result` message comes) when the turn showed
 *   no text at all.
 *
 * Subagents' messages (`parent_tool_use_id` set) and other deltas (thinking, tool input) are not
 * the turn's text.
 */
export function createClaudeAgentSdkTextProgress(emit: BackendTurnListener, resultText: () => string | null): ClaudeAgentSdkTextProgress {
  const streamed = new Set<string>();
  let current: string | undefined;
  // Deltas with no message id to tie them to: the next assistant message is theirs.
  let unassigned = false;
  let told = false;
  const tell = (text: string) => {
    told = true;
    emit({ type: "text", text, at: Date.now() });
  };
  return {
    observe(message) {
      const record = asRecord(message);
      if (record === undefined || !mainThread(record)) return;
      if (record.type === "stream_event") {
        const event = asRecord(record.event);
        if (event?.type === "message_start") current = asString(asRecord(event.message)?.id);
        if (event?.type !== "content_block_delta") return;
        const delta = asRecord(event.delta);
        if (delta?.type !== "text_delta" || typeof delta.text !== "string" || delta.text === "") return;
        const id = asString(record.api_message_id) ?? current;
        if (id === undefined) unassigned = true;
        else streamed.add(id);
        tell(delta.text);
      } else if (record.type === "assistant") {
        const body = asRecord(record.message);
        const id = asString(body?.id);
        const wasStreamed = (id !== undefined && streamed.has(id)) || unassigned;
        unassigned = false;
        const text = textOfContent(body?.content);
        if (!wasStreamed && text !== undefined && text !== "") tell(text);
      } else if (record.type === "result" && !told) {
        const text = resultText();
        if (text !== null && text !== "") tell(text);
      }
    },
  };
}
