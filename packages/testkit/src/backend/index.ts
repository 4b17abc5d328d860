export { describeBackendConformance } from "./backend-conformance.js";
export { BACKEND_CONFORMANCE_SCENARIOS } from "./backend-target.js";
export type {
  BackendBehaviour,
  BackendConformanceFilters,
  BackendConformanceHarness,
  BackendConformanceScenario,
  BackendConformanceTarget,
} from "./backend-target.js";
export { describeCapabilities, describeConcurrency, describeFreshTurn } from "./spec/fresh-turn.js";
export { describeResume, describeResumeFailure } from "./spec/resume.js";
export { describeAbort, describeTimeout } from "./spec/interruption.js";
export { describeGarbage, describeProviderErrors } from "./spec/garbage.js";
export { describeToolCalls, describeUsage } from "./spec/usage.js";
export { isProcessAlive, waitForProcessesToExit } from "./process-probe.js";
