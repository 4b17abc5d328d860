import { isAbsolute, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { canPlay, expectOk, useHarness, type BackendConformanceTarget } from "../backend-target.js";

/**
 * `usage`: each turn reports its own usage — exactly {@link BackendConformanceTarget.expectedUsage}
 * when the target knows it (a resumed turn's own figure, never the thread's running total) — and
 * buckets the backend does not know are `null`.
 */
export function describeUsage(target: BackendConformanceTarget): void {
  const expected = target.expectedUsage;
  if (!expected) return;
  describe(`${target.name}: usage`, () => {
    const suite = useHarness(target);
    it("reports exactly the usage of the fresh turn", async () => {
      const result = expectOk(await suite.harness().backend.runTurn(suite.request("success")));
      expect(result.usage).toEqual(expected.fresh);
    });
    const resumed = expected.resumed;
    if (target.resumable && resumed) {
      it("reports a resumed turn's own usage, not the thread's running total", async () => {
        const { second } = await suite.freshThenResumed();
        expect(second.usage).toEqual(resumed);
      });
    }
  });
}

/**
 * `tools`: a file the agent reads with a tool call is in `fileAccess` as a `read`, and counted in
 * `toolCalls`; a backend that cannot see its agent's tool calls (`toolCalls: "unknown"`) reports
 * `null` for a turn that showed none, never 0.
 */
export function describeToolCalls(target: BackendConformanceTarget): void {
  const path = target.toolReadPath;
  const reads = canPlay(target, "tool_read") && path !== undefined;
  if (!reads && target.toolCalls !== "unknown") return;
  describe(`${target.name}: tool calls`, () => {
    const suite = useHarness(target);
    if (target.toolCalls === "unknown") {
      it("reports an unseen tool-call count as null (unknown), never 0", async () => {
        const result = expectOk(await suite.harness().backend.runTurn(suite.request("success")));
        expect(result.toolCalls).toBeNull();
      });
    }
    if (!reads) return;
    it("reports the file the agent read, and counts the tool call", async () => {
      const { cwd } = suite.harness();
      const result = expectOk(await suite.harness().backend.runTurn(suite.request("tool_read")));
      expect(result.toolCalls).toBeGreaterThanOrEqual(1);
      const full = (entry: string) => (isAbsolute(entry) ? entry : resolve(cwd, entry));
      const readPaths = result.fileAccess.filter((access) => access.op === "read").map((access) => full(access.path));
      expect(readPaths).toContain(resolve(cwd, path!));
    });
  });
}
