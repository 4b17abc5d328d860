/**
 * Hammers one @keel/openai-agents session from a process of its own: `add <count> <label>` adds
 * `count` items one call at a time; `pop <count>` pops `count` items. Prints `{ "popped": [...] }`.
 * Arguments: kind location schema sessionId mode count label.
 */
import { createKeelSession } from "@keel/openai-agents";
import type { AgentInputItem } from "@openai/agents";
import { openFrameworkStore } from "./framework-store-open.js";

const [kind = "", location = "", schema = "", sessionId = "", mode = "", count = "0", label = ""] = process.argv.slice(2);
const store = openFrameworkStore(kind, location, schema === "-" ? undefined : schema);
const session = createKeelSession({ store, sessionId, maxPopAttempts: 1000 });
const popped: unknown[] = [];
for (let index = 0; index < Number(count); index += 1) {
  if (mode === "add") await session.addItems([{ role: "user", content: `${label}-${index}` } as AgentInputItem]);
  else popped.push(((await session.popItem()) as { content?: string } | undefined)?.content ?? null);
}
process.stdout.write(`${JSON.stringify({ popped })}\n`);
await store.close();
