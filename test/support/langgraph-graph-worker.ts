/**
 * A real LangGraph StateGraph with an interrupt, checkpointed by @keel/langgraph, in a process of
 * its own. `start` runs to the interrupt; `resume <name>` resumes with a name. With a barrier
 * directory, a resuming process waits (after reading the thread, before writing) until
 * `<barrier count>` processes are there, so racing resumers truly race.
 * Prints one JSON line: `{ "interrupted": … }`, `{ "state": … }` or `{ "error": code }` (exit 3).
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { KeelError } from "@keel/core";
import { createKeelCheckpointer } from "@keel/langgraph";
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { openFrameworkStore } from "./framework-store-open.js";

const [kind = "", location = "", schema = "", threadId = "", mode = "", name = "", barrierDir = "", barrierCount = "0"] = process.argv.slice(2);
const store = openFrameworkStore(kind, location, schema === "-" ? undefined : schema);
const checkpointer = createKeelCheckpointer({ store });

async function barrier(): Promise<void> {
  if (barrierDir === "" || barrierDir === "-") return;
  writeFileSync(path.join(barrierDir, `ready-${process.pid}`), "");
  const deadline = Date.now() + 60_000;
  while (readdirSync(barrierDir).filter((entry) => entry.startsWith("ready-")).length < Number(barrierCount) && Date.now() < deadline) await sleep(20);
  if (!existsSync(barrierDir)) throw new Error("barrier vanished");
}

const State = Annotation.Root({
  greeting: Annotation<string>(),
  name: Annotation<string>(),
  steps: Annotation<string[]>({ reducer: (left, right) => [...left, ...right], default: () => [] }),
});

const graph = new StateGraph(State)
  .addNode("prepare", () => ({ greeting: "Hello", steps: [`prepare@${process.pid}`] }))
  .addNode("ask", async () => {
    const answer = interrupt("what is your name?") as string;
    await barrier();
    return { name: answer, steps: [`ask@${process.pid}`] };
  })
  .addNode("greet", (state) => ({ greeting: `${state.greeting}, ${state.name}!`, steps: [`greet@${process.pid}`] }))
  .addEdge(START, "prepare")
  .addEdge("prepare", "ask")
  .addEdge("ask", "greet")
  .addEdge("greet", END)
  .compile({ checkpointer });

const config = { configurable: { thread_id: threadId } };
try {
  if (mode === "start") {
    const result = await graph.invoke({ greeting: "" }, config);
    const interrupts = (result as { __interrupt__?: { value: unknown }[] }).__interrupt__ ?? [];
    process.stdout.write(`${JSON.stringify({ interrupted: interrupts.map((entry) => entry.value) })}\n`);
  } else {
    const state = await graph.invoke(new Command({ resume: name }), config);
    process.stdout.write(`${JSON.stringify({ state })}\n`);
  }
  await store.close();
} catch (error) {
  const keel = KeelError.is(error) ? error : KeelError.is((error as { cause?: unknown }).cause) ? ((error as { cause: KeelError }).cause) : undefined;
  process.stdout.write(`${JSON.stringify({ error: keel?.code ?? "unknown", message: error instanceof Error ? error.message : String(error) })}\n`);
  await store.close();
  process.exit(3);
}
