import { describePowerLoss } from "./support/power-loss/suite.js";

/**
 * Simulated power loss for `@keel/store-sqlite` (WAL, synchronous FULL, as the store configures
 * it): the same workload and checks as the filesystem store's test, through the Keel store API.
 * SQLite's `-shm` index is written through mmap and rebuilt at open: it is never part of a state.
 */
describePowerLoss({
  title: "@keel/store-sqlite",
  workload: "test/support/power-loss/store-workload.ts",
  checker: "test/support/power-loss/store-checker.ts",
  args: ["sqlite"],
  defaultStates: 40,
});
