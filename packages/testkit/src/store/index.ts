export { describeStoreConformance } from "./store-conformance.js";
export { describeDocumentConformance } from "./store-conformance-documents.js";
export { describeBatchConformance } from "./store-conformance-batch.js";
export { describeLogConformance } from "./store-conformance-logs.js";
export { describeLeaseConformance } from "./store-conformance-leases.js";
export { describeIntegrityConformance } from "./store-conformance-integrity.js";
export { describeSharingConformance } from "./store-conformance-sharing.js";
export { createStoreConformanceHarness } from "./store-conformance-harness.js";
export type { StoreConformanceHarness, StoreConformancePrimitive, StoreConformanceTarget } from "./store-conformance-harness.js";
