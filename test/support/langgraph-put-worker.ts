/**
 * Puts checkpoints of one thread in a loop over @keel/langgraph and prints each checkpoint id
 * once its `put` has resolved (acknowledged), until killed. Arguments: kind location schema.
 */
import { createKeelCheckpointer } from "@keel/langgraph";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { openFrameworkStore } from "./framework-store-open.js";

const [kind = "", location = "", schema = ""] = process.argv.slice(2);
const saver = createKeelCheckpointer({ store: openFrameworkStore(kind, location, schema === "-" ? undefined : schema) });
let config: RunnableConfig = { configurable: { thread_id: "crash" } };
for (let step = 0; ; step += 1) {
  const checkpoint = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { step, text: "t".repeat(2_000) }, channel_versions: { step: step + 1, text: 1 } };
  config = await saver.put(config, checkpoint, { source: "loop", step, parents: {} }, step === 0 ? { step: 1, text: 1 } : { step: step + 1 });
  process.stdout.write(`${checkpoint.id}\n`);
}
