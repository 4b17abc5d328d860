/**
 * The vitest block every power-loss test file runs: find strace (missing: skipped with its reason,
 * a failure under `CI=true`), record the workload, check the crash states, and require that the
 * trace was read whole, that cuts fell at many points (some with pending changes lost) and that
 * no state failed — a failed state is printed with its cut, its failures and its files.
 */
import { describe, expect, it } from "vitest";
import { runPowerLoss, stateBudget } from "./harness.js";
import { findStrace } from "./record.js";
import { describeFailure } from "./replay.js";

/** What one power-loss test file runs. */
export interface PowerLossSuite {
  /** The name in the test title (`@keel/store-fs`). */
  title: string;
  workload: string;
  checker: string;
  args?: readonly string[];
  workloadArgs?: (scratch: string) => string[];
  prepare?: (root: string, scratch: string) => void;
  /** States explored when `KEEL_POWER_LOSS_STATES` is not set (about a minute on a 2-core machine). */
  defaultStates: number;
}

/** Declares the power-loss test of one store or layer. */
export function describePowerLoss(suite: PowerLossSuite): void {
  const strace = findStrace();
  const maxStates = stateBudget(suite.defaultStates);
  describe(`${suite.title} after a power cut`, () => {
    if (!strace) {
      if (process.env["CI"] === "true") {
        it("needs strace in CI", () => {
          throw new Error("strace is missing: install Debian's strace package (apt-get install -y strace); .ci/run does");
        });
        return;
      }
      console.warn(`[power-loss] ${suite.title} skipped: strace is not installed (apt-get install -y strace); CI=true makes this a failure`);
      it.skip(`keeps every acknowledged write (strace not installed)`, () => undefined);
      return;
    }
    it(`opens, keeps every acknowledged write and stays writable in ${maxStates} crash states`, async () => {
      const run = await runPowerLoss({ strace, maxStates, ...suite });
      // The model's final tree is the real directory: no call was missed or misread.
      expect(run.recording.mismatch).toEqual([]);
      const failed = run.verdicts.filter((verdict) => verdict.failures.length > 0);
      const variants = new Set(run.verdicts.map((verdict) => verdict.state.variant));
      console.log(
        `[power-loss] ${suite.title}: ${run.verdicts.length} states (${run.points} crash points, ${run.considered} variants built) from ${run.recording.calls} system calls; ${run.checked} acknowledged operations checked; ${failed.length} states failed; ${run.seconds.toFixed(0)} s`,
      );
      expect(failed.map(describeFailure).slice(0, 5)).toEqual([]);
      expect(run.verdicts.length).toBeGreaterThanOrEqual(Math.min(maxStates, 10));
      expect(variants.has("lost")).toBe(true);
      expect(run.checked).toBeGreaterThan(0);
    }, 900_000);
  });
}
