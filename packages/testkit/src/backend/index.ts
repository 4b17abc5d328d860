export { describeBackendConformance } from "./backend-conformance.js";
export type { BackendConformanceHarness, BackendConformanceScenario, BackendConformanceTarget } from "./backend-conformance.js";
export { isProcessAlive, waitForProcessesToExit } from "./process-probe.js";
