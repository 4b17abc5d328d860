import { describe, expect, it } from "vitest";
import { expectCode, expectTurnShape, useHarness, type BackendConformanceTarget } from "../backend-target.js";

/**
 * `resume`: the thread a fresh turn returned is resumed (with the `resumeState` it returned);
 * a fresh-only backend answers a thread with `unsupported` instead.
 */
export function describeResume(target: BackendConformanceTarget): void {
  const unknownThreadId = target.unknownThreadId ?? "keel-conformance-missing-thread";
  describe(`${target.name}: resume`, () => {
    const suite = useHarness(target);
    if (!target.resumable) {
      it("refuses to resume a thread: unsupported", async () => {
        expectCode(await suite.harness().backend.runTurn(suite.request("success", { threadId: unknownThreadId })), "unsupported");
      });
      return;
    }
    it("resumes the thread it returned", async () => {
      const { first, second } = await suite.freshThenResumed();
      expectTurnShape(second);
      expect(second.threadId).toBe(first.threadId);
    });
  });
}

/** `resume_failure`: a thread the backend never saw is `resume_failed`, with the thread id in the details. */
export function describeResumeFailure(target: BackendConformanceTarget): void {
  const unknownThreadId = target.unknownThreadId ?? "keel-conformance-missing-thread";
  if (!target.resumable) return;
  describe(`${target.name}: resume failure`, () => {
    const suite = useHarness(target);
    it("classifies a gone thread as resume_failed", async () => {
      const error = expectCode(await suite.harness().backend.runTurn(suite.request("success", { threadId: unknownThreadId })), "resume_failed");
      expect(error.details.resumeFailed).toBe(true);
      expect(error.details.threadId).toBe(unknownThreadId);
      await suite.expectProcessesGone();
    });
  });
}
