import { expect, it } from "vitest";
import { runTracedTurns } from "./otel-trace.js";

it("nests Keel's turns under the host's span, marks the refused one, and records token usage", async () => {
  const run = await runTracedTurns();
  expect(run.tree).toEqual([
    "handle request",
    "  invoke_agent engineer fresh",
    "    execute_tool read src/app.ts",
    "  invoke_agent engineer resumed",
    "    execute_tool read src/app.ts",
    "  invoke_agent engineer budget_exceeded",
  ]);
  expect(run.tokens.input).toBeGreaterThan(0);
  expect(run.tokens.output).toBeGreaterThan(0);
});
