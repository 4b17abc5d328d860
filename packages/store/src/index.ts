export type {
  AcquireOptions,
  AppendOptions,
  AppendResult,
  DeleteCondition,
  Doc,
  DocMeta,
  DocStore,
  Fence,
  FenceOption,
  IntegrityProblem,
  IntegrityRepair,
  IntegrityReport,
  KeelStore,
  Key,
  Lease,
  LeaseStore,
  LogRecord,
  LogRecordInput,
  LogStore,
  PageRequest,
  PutCondition,
  StoreCapabilities,
} from "./ports.js";
export {
  DEFAULT_MAX_VALUE_BYTES,
  MAX_KEY_DEPTH,
  MAX_RECORD_ID_LENGTH,
  compareKeyToCursor,
  compareKeys,
  encodeValue,
  hasPrefix,
  keyCursor,
  keyPath,
  leaseLost,
  validateAcquire,
  validateAppend,
  validateDeleteCondition,
  validateFenceOption,
  validateKey,
  validateLease,
  validateLeaseName,
  validatePage,
  validatePutCondition,
  validateReadOptions,
  validateRenewOptions,
} from "./validation.js";
export type { EncodedRecord } from "./validation.js";
export {
  checkFence,
  decideAcquire,
  decideAppend,
  decideDelete,
  decidePut,
  decideRelease,
  decideRenew,
  leaseHeld,
} from "./rules.js";
export type { DocState, LeaseState, LogState } from "./rules.js";
export { pollUntil } from "./poll.js";
export type { Attempt } from "./poll.js";
export { updateDoc, withLease } from "./helpers.js";
export type { UpdateDocOptions, WithLeaseOptions } from "./helpers.js";
export { createMemoryStore } from "./memory-store.js";
export type { MemoryStoreOptions } from "./memory-store.js";
