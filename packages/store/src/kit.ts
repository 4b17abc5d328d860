/**
 * `@keel/store/kit`: what store adapter authors (and domain packages writing documents) share:
 * input validation, the pure decision rules every store applies, polling, and `updateDoc`.
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
  validateAcquire,
  validateAppend,
  validateBatch,
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
export { pollUntil } from "./poll.js";
export type { Attempt } from "./poll.js";
export { updateDoc } from "./helpers.js";
export type { UpdateDocOptions } from "./helpers.js";
export { decodeKeyText, encodeCursorText, encodeKeyText, keyTextPrefixRange } from "./key-text.js";
