import { tmpdir } from "node:os";
import { describeBackendConformance } from "@keel/testkit/backend";
import { describe, expect, it } from "vitest";
import { createFunctionBackend } from "./function-backend.js";

// A model function that plays each conformance scenario from a marker in the prompt.
const model = async (prompt: string, history: readonly { prompt: string }[], signal: AbortSignal) => {
  if (prompt.includes("[in_band_error]")) return { error: "rate limited" };
  if (prompt.includes("[garbage]")) return "<html>not an answer</html>";
  if (prompt.includes("[hang]")) return new Promise((resolve) => signal.addEventListener("abort", () => resolve({ text: "late" })));
  return { text: `answer ${history.length + 1}` };
};

describeBackendConformance({
  name: "function backend (example)",
  resumable: true,
  setup: () => ({
    backend: createFunctionBackend({ id: "function", model }),
    cwd: tmpdir(),
    scenario: (scenario) => (scenario === "success" || scenario === "unknown_events" ? {} : { prompt: `Go. [${scenario}]` }),
  }),
});

describe("function backend", () => {
  it("remembers a thread across turns", async () => {
    const backend = createFunctionBackend({ id: "function", model });
    const first = (await backend.runTurn({ prompt: "one", cwd: tmpdir(), timeoutMs: 1000 }))._unsafeUnwrap();
    const second = (await backend.runTurn({ prompt: "two", cwd: tmpdir(), timeoutMs: 1000, threadId: first.threadId! }))._unsafeUnwrap();
    expect(second.text).toBe("answer 2");
    expect(second.usage.inputUncached!).toBeGreaterThan(first.usage.inputUncached!);
  });
});
