import type { BackendTurnEvent } from "@keel/backend";
import { describe, expect, it } from "vitest";
import { createClaudeStyleParser } from "./claude-style-parser.js";
import { createFindingsObserver } from "./stream-progress.js";
import { emptyFindings } from "./turn-outcome.js";
import { recordToolCall } from "./tool-calls.js";

describe("createFindingsObserver", () => {
  it("reports each tool call, file access and piece of answer text once, in order", () => {
    const findings = emptyFindings();
    const seen: BackendTurnEvent[] = [];
    const observe = createFindingsObserver(() => findings, (event) => seen.push(event));
    observe();
    expect(seen).toEqual([]);
    recordToolCall(findings, "Read", [{ op: "read", path: "a.ts" }]);
    recordToolCall(findings, "WebFetch");
    observe();
    findings.text = "first";
    observe();
    findings.text = "first\n\nsecond";
    observe();
    observe();
    findings.text = "replaced";
    observe();
    expect(seen.map(({ at: _at, ...event }) => event)).toEqual([
      { type: "tool_call", tool: "Read" },
      { type: "tool_call", tool: "WebFetch" },
      { type: "file_access", access: { op: "read", path: "a.ts", tool: "Read" } },
      { type: "text", text: "first" },
      { type: "text", text: "\n\nsecond" },
      { type: "text", text: "replaced" },
    ]);
  });

  it("reports a copy of each access: a read's bytes filled in later do not change what was reported", () => {
    const parser = createClaudeStyleParser();
    const seen: BackendTurnEvent[] = [];
    const observe = createFindingsObserver(() => parser.findings(), (event) => seen.push(event));
    parser.push(JSON.stringify({ type: "assistant", message: { content: [{ type: "tool_use", id: "c1", name: "Read", input: { file_path: "/r/a.ts" } }] } }));
    observe();
    parser.push(JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "c1" }] }, tool_use_result: { file: { content: "abc" } } }));
    observe();
    expect(seen.filter((event) => event.type === "file_access")).toEqual([expect.objectContaining({ access: { op: "read", path: "/r/a.ts", tool: "Read" } })]);
    expect(parser.findings().toolNames).toEqual(["Read"]);
  });
});

describe("createFindingsObserver without text", () => {
  it("reports tool calls and file accesses but leaves the text to the adapter", () => {
    const findings = emptyFindings();
    const seen: BackendTurnEvent[] = [];
    const observe = createFindingsObserver(() => findings, (event) => seen.push(event), { text: false });
    recordToolCall(findings, "Read", [{ op: "read", path: "a.ts" }]);
    findings.text = "the answer";
    observe();
    expect(seen.map((event) => event.type)).toEqual(["tool_call", "file_access"]);
  });
});
