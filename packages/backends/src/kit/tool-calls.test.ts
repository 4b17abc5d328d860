import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { emptyFindings, fileAccessOfCommand, recordToolCall } from "./index.js";

describe("fileAccessOfCommand: the file accesses a shell command makes", () => {
  it.each([
    ["cat README.md", [{ op: "read", path: "README.md" }]],
    ["bash -lc 'sed -n 1,80p src/app.ts'", [{ op: "read", path: "src/app.ts" }]],
    ['bash -lc "head -n 20 a.txt b.txt"', [{ op: "read", path: "a.txt" }, { op: "read", path: "b.txt" }]],
    ["rg -n TODO src", [{ op: "search", path: "src" }]],
    ["grep -rn 'a b' .", [{ op: "search", path: "." }]],
    ["ls", [{ op: "search", path: "." }]],
    ["find . -name '*.ts'", [{ op: "search", path: "." }]],
    ["echo hi > out.txt", [{ op: "write", path: "out.txt" }]],
    ["cat a.txt | tee b.txt", [{ op: "read", path: "a.txt" }, { op: "write", path: "b.txt" }]],
    ["wc -l < data.csv 2>/dev/null", [{ op: "read", path: "data.csv" }]],
    ["npm test && git status", []],
  ])("%s", (command, expected) => {
    expect(fileAccessOfCommand(command)).toEqual(expected);
  });

  it("takes an argv array too", () => {
    expect(fileAccessOfCommand(["/bin/cat", "x.md"])).toEqual([{ op: "read", path: "x.md" }]);
  });

  it("never throws and never reports an empty or /dev path", () => {
    fc.assert(
      fc.property(fc.string(), (command) => {
        for (const access of fileAccessOfCommand(command)) {
          expect(access.path).not.toBe("");
          expect(access.path.startsWith("/dev/")).toBe(false);
        }
      }),
    );
  });
});

describe("recordToolCall", () => {
  it("counts every call, records its accesses, drops empty paths and invalid byte counts", () => {
    const findings = emptyFindings();
    recordToolCall(findings, "web_fetch");
    recordToolCall(findings, "Read", [{ op: "read", path: "a.md", bytes: 12 }, { op: "read", path: " " }]);
    recordToolCall(findings, "Write", [{ op: "write", path: "b.md", bytes: -1 }]);
    expect(findings.toolCalls).toBe(3);
    expect(findings.fileAccess).toEqual([
      { op: "read", path: "a.md", bytes: 12, tool: "Read" },
      { op: "write", path: "b.md", tool: "Write" },
    ]);
  });
});
