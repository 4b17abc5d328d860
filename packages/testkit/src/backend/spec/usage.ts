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
        const { backend } = suite.harness();
        const first = expectOk(await backend.runTurn(suite.request("success")));
        const second = expectOk(
          await backend.runTurn(
            suite.request("success", {
              prompt: "And the license?",
              threadId: first.threadId!,
              ...(first.resumeState ? { resumeState: first.resumeState } : {}),
            }),
          ),
        );
        expect(second.usage).toEqual(resumed);
      });
    }
  });
}

/** `tools`: a file the agent reads with a tool call is in `fileAccess` as a `read`, and counted in `toolCalls`. */
export function describeToolCalls(target: BackendConformanceTarget): void {
  const path = target.toolReadPath;
  if (!canPlay(target, "tool_read") || path === undefined) return;
  describe(`${target.name}: tool calls`, () => {
    const suite = useHarness(target);
    it("reports the file the agent read, and counts the tool call", async () => {
      const { cwd } = suite.harness();
      const result = expectOk(await suite.harness().backend.runTurn(suite.request("tool_read")));
      expect(result.toolCalls).toBeGreaterThanOrEqual(1);
      const full = (entry: string) => (isAbsolute(entry) ? entry : resolve(cwd, entry));
      const reads = result.fileAccess.filter((access) => access.op === "read").map((access) => full(access.path));
      expect(reads).toContain(resolve(cwd, path));
    });
  });
}
