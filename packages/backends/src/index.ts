export { builtInAdapterIds, listBuiltInAdapters, loadBuiltInAdapter } from "./backend-adapters.js";
export { detectBackends } from "./backend-detect.js";
export type { BackendDetection, DetectBackendsOptions } from "./backend-detect.js";
export type { BackendAdapterInfo } from "./kit/index.js";
