/**
 * One turn of a real OpenAI Agents JS `Agent` with a @keel/openai-agents session, in a process of
 * its own, against an OpenAI-compatible endpoint (the fake provider). Prints `{ "output": … }`.
 * Arguments: kind location schema sessionId baseURL input. The default `run()` is used as is.
 */
import { Agent, run, setTracingDisabled } from "@openai/agents";
import { createKeelSession } from "@keel/openai-agents";
import { openFrameworkStore } from "./framework-store-open.js";

const [kind = "", location = "", schema = "", sessionId = "", baseURL = "", input = ""] = process.argv.slice(2);
setTracingDisabled(true);
// The SDK's OpenAI client reads its endpoint and key from the environment.
process.env.OPENAI_BASE_URL = baseURL;
process.env.OPENAI_API_KEY = "sk-fake";
const store = openFrameworkStore(kind, location, schema === "-" ? undefined : schema);
const session = createKeelSession({ store, sessionId });
const agent = new Agent({ name: "Assistant", instructions: "Answer briefly.", model: "fake-model" });
const result = await run(agent, input, { session });
process.stdout.write(`${JSON.stringify({ output: result.finalOutput })}\n`);
await store.close();
