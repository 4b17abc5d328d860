import { join } from "node:path";
import type { FakeProviderRequest, FakeReply, FakeToolCall } from "@keel/testkit/provider";
import { demoRespond, demoTaskOf } from "./demo-mission.js";

/** What {@link demoProviderReply} needs to know about the CLI and the demo repository. */
export interface DemoProviderContext {
  /** The demo repository (the CLI's cwd), absolute. */
  workspace: string;
  /** The tool call that makes the CLI read a file (absolute path) with its own read tool. */
  readTool(path: string): FakeToolCall;
}

/** Usage billed per model call: a fixed figure, so runs compare by turns and prompt size. */
const USAGE = { inputUncached: 400, output: 40 };

/**
 * The fake provider's answer to one model call of the demo mission, when a real CLI runs the
 * turns. Stateless, from the conversation the CLI sent: the role opens, one per model call and
 * with the CLI's own read tool, each file the round needs whose path its thread has not shown
 * yet (a fresh thread re-reads; a resumed thread already holds the earlier reads; a capsule seed
 * names the paths inspected), then answers with the same text as the scripted demo
 * (`Decision:`, a verdict for the reviewer) without `Inspected:` lines — so the repeated reads
 * of the report come only from the CLI's real tool calls (`fileAccess`).
 */
export function demoProviderReply(request: FakeProviderRequest, context: DemoProviderContext): FakeReply {
  const task = demoTaskOf(request.text);
  if (!task) return { text: "I did not understand the task.\nDecision: none", usage: USAGE };
  const seeded = /^Paths you inspected: (.+)$/m.exec(request.text)?.[1]?.split(",").map((path) => path.trim()) ?? [];
  const unread = task.files.filter((path) => !seeded.includes(path) && !request.text.includes(join(context.workspace, path)));
  if (unread.length > 0) return { toolCalls: [context.readTool(join(context.workspace, unread[0]!))], usage: USAGE };
  const { text = "" } = demoRespond({ call: 1, prompt: task.prompt, action: "fresh", threadId: null, threadTurn: 1, history: [], model: null, cwd: context.workspace, skillPaths: [] });
  return { text: text.split("\n").filter((line) => !line.startsWith("Inspected: ")).join("\n"), usage: USAGE };
}
