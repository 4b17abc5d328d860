import type { BackendTurnRequest } from "@keel/backend";
import { describe, expect, it } from "vitest";
import { canPlay, expectCode, expectOk, useHarness, type BackendConformanceTarget } from "../backend-target.js";

/**
 * `garbage`: what is not a normal turn is classified, never thrown: unknown event types are
 * ignored, an in-band error is `backend_failed` even with exit code 0, a broken format is
 * `corrupt`, an invalid request is `invalid_input`.
 */
export function describeGarbage(target: BackendConformanceTarget): void {
  describe(`${target.name}: garbage`, () => {
    const suite = useHarness(target);
    if (canPlay(target, "unknown_events")) {
      it("ignores unknown event types", async () => {
        const { backend } = suite.harness();
        const plain = expectOk(await backend.runTurn(suite.request("success")));
        const mixed = expectOk(await backend.runTurn(suite.request("unknown_events")));
        expect(mixed.text).toBe(plain.text);
        expect(mixed.usage).toEqual(plain.usage);
      });
    }
    if (canPlay(target, "in_band_error")) {
      it("reports an in-band error as backend_failed, even with exit code 0", async () => {
        expectCode(await suite.harness().backend.runTurn(suite.request("in_band_error")), "backend_failed");
      });
    }
    if (canPlay(target, "garbage")) {
      it("reports output that breaks the promised format as corrupt", async () => {
        expectCode(await suite.harness().backend.runTurn(suite.request("garbage")), "corrupt");
      });
    }
    it("answers an invalid request with invalid_input", async () => {
      const base = suite.request("success");
      const invalid: unknown[] = [
        { ...base, cwd: "relative/dir" },
        { ...base, timeoutMs: 0 },
        { ...base, prompt: "" },
        { ...base, threadId: "--no-such-flag" },
        { ...base, unexpected: true },
      ];
      for (const bad of invalid) expectCode(await suite.harness().backend.runTurn(bad as BackendTurnRequest), "invalid_input");
    });
  });
}

/** `errors`: a provider failure the CLI marks as transient (429, 5xx, 529, overloaded) is a retryable `backend_failed`. */
export function describeProviderErrors(target: BackendConformanceTarget): void {
  if (!canPlay(target, "transient_error")) return;
  describe(`${target.name}: provider errors`, () => {
    const suite = useHarness(target);
    it("reports a transient provider error as backend_failed, retryable, with the CLI's message", async () => {
      const error = expectCode(await suite.harness().backend.runTurn(suite.request("transient_error")), "backend_failed");
      expect(error.retryable).toBe(true);
      expect(error.message).toMatch(/\S/);
    });
  });
}
