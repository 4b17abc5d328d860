import { describe, expect, it } from "vitest";
import { canPlay, expectCode, expectOk, useHarness, type BackendConformanceTarget } from "../backend-target.js";

/** `timeout`: a hanging turn is `timeout`, the whole process group is gone, the thread id is kept. */
export function describeTimeout(target: BackendConformanceTarget): void {
  if (!canPlay(target, "hang")) return;
  const hangTimeoutMs = target.hangTimeoutMs ?? 2500;
  describe(`${target.name}: timeout`, () => {
    const suite = useHarness(target);
    it("times out: kills what it started (the whole process group) and keeps the thread id", async () => {
      const error = expectCode(await suite.harness().backend.runTurn(suite.request("hang", { timeoutMs: hangTimeoutMs })), "timeout");
      if (target.resumable) expect(error.details.threadId).toMatch(/\S/);
      await suite.expectProcessesGone();
    });
  });
}

/** `abort`: the caller's signal ends the turn as `aborted`, idempotently, before, during and after the run. */
export function describeAbort(target: BackendConformanceTarget): void {
  describe(`${target.name}: abort`, () => {
    const suite = useHarness(target);
    if (canPlay(target, "hang")) {
      it("aborts a running turn and kills its process group (aborting twice changes nothing)", async () => {
        const controller = new AbortController();
        const running = suite.harness().backend.runTurn(suite.request("hang"), controller.signal);
        await new Promise((resolve) => setTimeout(resolve, 300));
        controller.abort();
        controller.abort();
        expectCode(await running, "aborted");
        await suite.expectProcessesGone();
      });
    }
    it("is aborted before the start; an abort after the end changes nothing", async () => {
      const { backend } = suite.harness();
      const early = new AbortController();
      early.abort();
      expectCode(await backend.runTurn(suite.request("success"), early.signal), "aborted");
      const late = new AbortController();
      const finished = await backend.runTurn(suite.request("success"), late.signal);
      late.abort();
      late.abort();
      expectOk(finished);
    });
  });
}
