export { describeStoreConformance } from "./store-conformance.js";
export type { StoreConformanceTarget } from "./store-conformance.js";
