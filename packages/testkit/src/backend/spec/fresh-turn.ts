import { describe, expect, it } from "vitest";
import { expectOk, expectTurnShape, useHarness, type BackendConformanceTarget } from "../backend-target.js";

/** `capabilities`: the backend declares an id and capabilities that match the target. */
export function describeCapabilities(target: BackendConformanceTarget): void {
  describe(`${target.name}: capabilities`, () => {
    const suite = useHarness(target);
    it("declares an id and capabilities", () => {
      const { backend } = suite.harness();
      expect(backend.id).toMatch(/\S/);
      expect(backend.capabilities.resume).toBe(target.resumable);
      expect(["native", "staged", "prompt"]).toContain(backend.capabilities.skills);
      expect(["full", "partial", "none"]).toContain(backend.capabilities.usage);
    });
  });
}

/** `fresh`: a fresh turn returns text, a thread id (resumable backends) and a valid usage. */
export function describeFreshTurn(target: BackendConformanceTarget): void {
  describe(`${target.name}: fresh turn`, () => {
    const suite = useHarness(target);
    it("runs a fresh turn: text, thread id, usage non-negative or null", async () => {
      const { backend } = suite.harness();
      const result = expectOk(await backend.runTurn(suite.request("success")));
      expectTurnShape(result);
      if (target.resumable) expect(result.threadId).toMatch(/\S/);
      else expect(result.threadId).toBeNull();
      if (backend.capabilities.usage === "none") expect(Object.values(result.usage).every((value) => value === null)).toBe(true);
    });
  });
}

/** `concurrency`: two turns at once are independent (two threads). */
export function describeConcurrency(target: BackendConformanceTarget): void {
  describe(`${target.name}: concurrency`, () => {
    const suite = useHarness(target);
    it("runs concurrent turns independently", async () => {
      const { backend } = suite.harness();
      const [a, b] = await Promise.all([backend.runTurn(suite.request("success")), backend.runTurn(suite.request("success"))]);
      const first = expectOk(a);
      const second = expectOk(b);
      if (target.resumable) expect(first.threadId).not.toBe(second.threadId);
    });
  });
}
