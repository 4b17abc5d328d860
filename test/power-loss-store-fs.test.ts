import { describePowerLoss } from "./support/power-loss/suite.js";

/**
 * Simulated power loss for `@keel/store-fs` (issue 29 §2): the store workload (a store created in
 * an empty directory, document rewrites, log appends, a lease, a delete) recorded under strace;
 * every state a cut can leave under the strict model rebuilt and opened in a fresh process, as
 * after a reboot. `KEEL_POWER_LOSS_STATES` sets how many states (`.ci/run` runs more).
 */
describePowerLoss({
  title: "@keel/store-fs",
  workload: "test/support/power-loss/store-workload.ts",
  checker: "test/support/power-loss/store-checker.ts",
  args: ["fs"],
  defaultStates: 60,
});
