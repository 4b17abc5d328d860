export { detectBackends, listBuiltInAdapters } from "./backend-detect.js";
export type { BackendDetection, DetectBackendsOptions } from "./backend-detect.js";
