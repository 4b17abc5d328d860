export { createFaultyStore } from "./faulty-store.js";
export type { FaultHit, FaultOperation, FaultRule, FaultyStore } from "./faulty-store.js";
export { describeStoreConformance } from "./store/store-conformance.js";
export type { StoreConformancePrimitive, StoreConformanceTarget } from "./store/store-conformance-harness.js";
export { errOf, okValue } from "./result-assertions.js";
export type { AnyResult } from "./result-assertions.js";
export { useTempDirs } from "./temp-dirs.js";
export type { Closable, TempDirs } from "./temp-dirs.js";
