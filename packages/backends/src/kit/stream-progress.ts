import type { BackendTurnListener } from "@keel/backend";
import type { StreamFindings } from "./turn-outcome.js";

/**
 * Turns a parser's findings into progress events, line by line: call the returned function after
 * each line was pushed, and it reports what that line added — new tool calls (`tool_call`), new
 * file accesses (`file_access`, a copy: a read's `bytes` filled in later is not re-reported) and
 * new answer text (`text`: the added suffix when the answer grew, the whole answer when a parser
 * replaced it). Parsers need not know about progress: everything comes from the findings they
 * already keep. `listener` should be wrapped with `safeTurnListener`.
 *
 * With `options.text` false, no `text` event is derived from the findings: for an adapter that
 * reports the agent's text itself, message by message, before the parser settles the answer.
 */
export function createFindingsObserver(findings: () => StreamFindings, listener: BackendTurnListener, options: { text?: boolean } = {}): () => void {
  let tools = 0;
  let accesses = 0;
  let text: string | null = null;
  return () => {
    const seen = findings();
    const at = Date.now();
    const names = seen.toolNames ?? [];
    for (; tools < names.length; tools += 1) listener({ type: "tool_call", tool: names[tools]!, at });
    for (; accesses < seen.fileAccess.length; accesses += 1) listener({ type: "file_access", access: { ...seen.fileAccess[accesses]! }, at });
    if (options.text !== false && seen.text !== null && seen.text !== text) {
      const added = text !== null && seen.text.startsWith(text) ? seen.text.slice(text.length) : seen.text;
      text = seen.text;
      if (added !== "") listener({ type: "text", text: added, at });
    }
  };
}
