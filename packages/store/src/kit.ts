/**
 * `@keel/store/kit`: what store adapter authors (and domain packages writing documents) share:
 * input validation, the pure decision rules every store applies, polling, `updateDoc`, the
 * lease keeper that holds a lease around a unit of work, the shape check of a `store` option
 * (`isKeelStore`, `keelStoreSchema`), and the rename-token lock of the filesystem store and the
 * skills' managed layer (`acquireRenameLock`). Also what the row stores (SQLite,
 * PostgreSQL) share outside their SQL: argument checks, stored JSON, pages from rows, integrity
 * findings and the lease port over one atomic change (`createLeasePort`).
 * The ports and the memory store are the main entry, `@keel/store`.
 *
 * @packageDocumentation
 */
export {
  DEFAULT_MAX_VALUE_BYTES,
  MAX_DURATION_MS,
  MAX_BATCH_WRITES,
  MAX_KEY_DEPTH,
  MAX_RECORD_ID_LENGTH,
  compareKeyToCursor,
  compareKeys,
  encodeValue,
  hasPrefix,
  keyCursor,
  keyPath,
  leaseLost,
  sameJsonText,
  validateAcquire,
  validateAppend,
  validateBatch,
  validateCheckOptions,
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
export type { EncodedPut, EncodedRecord } from "./validation.js";
export {
  checkFence,
  decideAcquire,
  decideAppend,
  decideBatch,
  decideDelete,
  decidePut,
  decideRelease,
  decideRenew,
  leaseHeld,
  remainingTtl,
} from "./rules.js";
export type { DocState, LeaseState, LogState } from "./rules.js";
export { leaseWaitAborted, pollUntil } from "./poll.js";
export type { Attempt } from "./poll.js";
export { updateDoc } from "./helpers.js";
export type { UpdateDocOptions } from "./helpers.js";
export { decodeKeyText, encodeCursorText, encodeKeyText, keyTextPrefixRange } from "./key-text.js";
export { createLeaseKeeper } from "./lease-keeper.js";
export type { LeaseKeeper, LeaseKeeperOptions, LeaseRunOptions } from "./lease-keeper.js";
export { isKeelStore, keelStoreSchema } from "./store-shape.js";
export type { StorePort } from "./store-shape.js";
export {
  LOCK_FREE_ENTRY,
  LOCK_INIT_PREFIX,
  acquireRenameLock,
  buildLockDirectory,
  heldLockEntry,
  inspectLockEntries,
  lockHostTag,
  parseLockHolder,
  processAlive,
  releaseRenameLock,
} from "./rename-lock.js";
export type { HeldRenameLock, LockHolder, LockInspection, RenameLockIo, RenameLockOptions } from "./rename-lock.js";
export {
  docMetaPage,
  docValuePage,
  parseStoredValue,
  runDocDecision,
  storedDoc,
  storedRecords,
  validateAppendArguments,
  validateBatchArguments,
  validateDeleteArguments,
  validateLogDeleteArguments,
  validateLogKey,
  validatePageQuery,
  validatePutArguments,
  validateReadArguments,
  validateUpdateArguments,
} from "./row-store.js";
export type { DocStamp, PageQuery, RowKey, StoredPlace } from "./row-store.js";
export { createIntegrityFindings } from "./integrity-findings.js";
export type { IntegrityFindings, LogSeqs } from "./integrity-findings.js";
export { createLeasePort, pollAcquire } from "./lease-port.js";
export type { AcquireRequest, LeaseChange, LeaseRows } from "./lease-port.js";
