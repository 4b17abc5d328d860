import { describe, expect, it } from "vitest";
import { createToolLedger, emptyFindings, toolAccessesFrom, type ToolAccessTable } from "./index.js";

const table: ToolAccessTable = {
  tools: { open: "read", save: "write", patch: "edit", find: "search", run: "shell", editor: (args) => (args?.mode === "view" ? "read" : "edit") },
  pathFields: ["file", "path"],
  contentFields: ["text", "content"],
  searchPatternField: "pattern",
};

describe("toolAccessesFrom: a CLI's tool calls read through its table", () => {
  it.each([
    ["open", { path: "a.ts", file: 1 }, [{ op: "read", path: "a.ts" }]],
    ["save", { file: "b.ts", content: "hé" }, [{ op: "write", path: "b.ts", bytes: 3 }]],
    ["save", { file: "b.ts", text: 1, content: "ignored: the first present field wins" }, [{ op: "write", path: "b.ts" }]],
    ["patch", { file: "c.ts" }, [{ op: "write", path: "c.ts" }]],
    ["editor", { file: "d.ts", mode: "view" }, [{ op: "read", path: "d.ts" }]],
    ["editor", { file: "d.ts" }, [{ op: "write", path: "d.ts" }]],
    ["find", { pattern: "*.md" }, [{ op: "search", path: "*.md" }]],
    ["find", {}, [{ op: "search", path: "." }]],
    ["run", { command: "cat e.txt" }, [{ op: "read", path: "e.txt" }]],
    ["open", {}, []],
    ["fetch", { path: "f.ts" }, []],
    ["toString", { path: "f.ts" }, []],
  ])("%s %j", (tool, args, expected) => {
    expect(toolAccessesFrom(table, tool, args)).toEqual(expected);
  });
});

describe("createToolLedger: tool calls by id", () => {
  it("counts an id once with countOnce, and fills a read's bytes from its result once", () => {
    const findings = emptyFindings();
    const ledger = createToolLedger({ countOnce: true });
    ledger.record(findings, "1", "open", [{ op: "read", path: "a.ts" }]);
    ledger.record(findings, "1", "open", [{ op: "read", path: "a.ts" }]);
    ledger.fillReadBytes(findings, "1", 10);
    ledger.fillReadBytes(findings, "1", 20);
    expect(findings.toolCalls).toBe(1);
    expect(findings.fileAccess).toEqual([{ op: "read", path: "a.ts", tool: "open", bytes: 10 }]);
  });

  it("counts every call without countOnce, and fills bytes only for the tools named", () => {
    const findings = emptyFindings();
    const ledger = createToolLedger({ readBytesFrom: (tool) => tool === "open" });
    ledger.record(findings, "1", "run", [{ op: "read", path: "a.ts" }]);
    ledger.record(findings, "1", "run", [{ op: "read", path: "a.ts" }]);
    ledger.record(findings, "2", "open", [{ op: "read", path: "b.ts" }]);
    ledger.fillReadBytes(findings, "1", 10);
    ledger.fillReadBytes(findings, "2", 20);
    expect(findings.toolCalls).toBe(3);
    expect(findings.fileAccess.map((access) => access.bytes)).toEqual([undefined, undefined, 20]);
  });
});
