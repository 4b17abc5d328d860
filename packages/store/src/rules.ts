import { KeelError } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import type { DeleteCondition, Fence, Lease, PutCondition } from "./ports.js";
import { MAX_DURATION_MS, leaseLost, sameJsonText, type EncodedRecord } from "./validation.js";

/**
 * The pure decisions every adapter shares, so that every store means the same thing by
 * `conflict`, `deleted` and `lease_lost`. Adapters load the current state, ask here, then write.
 */

/** What a store knows of one document key: a live version or a tombstone. */
export interface DocState {
  version: number;
  deleted: boolean;
}

/** Decides a put: the new version, or why not. */
export function decidePut(current: DocState | undefined, condition: PutCondition, keyText: string): Result<number, KeelError> {
  const next = (current?.version ?? 0) + 1;
  if ("unconditional" in condition) return ok(next);
  if ("create" in condition) {
    if (current && !current.deleted) {
      return err(
        new KeelError("conflict", `document ${keyText} already exists (version ${current.version}); use { expectedVersion } to replace it`, {
          details: { key: keyText, actual: current.version },
        }),
      );
    }
    return ok(next);
  }
  return checkExpected(current, condition.expectedVersion, keyText).map(() => next);
}

/**
 * Decides a batch of puts, all or none: the new version of each (in order), or the error of the
 * first write refused, naming it (`writes[i]: …`, `details.index`).
 */
export function decideBatch(
  states: readonly (DocState | undefined)[],
  writes: readonly { condition: PutCondition; path: string }[],
): Result<number[], KeelError> {
  const versions: number[] = [];
  for (const [index, write] of writes.entries()) {
    const decided = decidePut(states[index], write.condition, write.path);
    if (decided.isErr()) {
      const error = decided.error;
      return err(new KeelError(error.code, `writes[${index}]: ${error.message}`, { details: { ...error.details, index }, cause: error, retryable: error.retryable }));
    }
    versions.push(decided.value);
  }
  return ok(versions);
}

/** Decides a delete: `true` when a live document goes, `false` when there was nothing to delete. */
export function decideDelete(current: DocState | undefined, condition: DeleteCondition, keyText: string): Result<boolean, KeelError> {
  if ("unconditional" in condition) return ok(current !== undefined && !current.deleted);
  return checkExpected(current, condition.expectedVersion, keyText).map(() => true);
}

function checkExpected(current: DocState | undefined, expected: number, keyText: string): Result<void, KeelError> {
  if (current?.deleted) {
    return err(
      new KeelError("deleted", `document ${keyText} was deleted after version ${expected}; re-read it before writing`, {
        details: { key: keyText, expected, actual: current.version },
        retryable: false,
      }),
    );
  }
  if (!current) {
    return err(
      new KeelError("conflict", `document ${keyText} does not exist (expected version ${expected}); use { create: true }`, {
        details: { key: keyText, expected },
      }),
    );
  }
  if (current.version !== expected) {
    return err(
      new KeelError("conflict", `document ${keyText} is at version ${current.version}, not ${expected}; re-read and retry`, {
        details: { key: keyText, expected, actual: current.version },
      }),
    );
  }
  return ok(undefined);
}

/** What a store knows of one log: its last seq, whether it is deleted, and the stored text of an id. */
export interface LogState {
  lastSeq: number;
  deleted: boolean;
  /** The JSON text stored under `id` in the live log, or undefined. */
  textOf(id: string): string | undefined;
}

/** Decides an append: which records are new, how many are deduplicated, or why not. */
export function decideAppend(
  state: LogState,
  records: readonly EncodedRecord[],
  expectedSeq: number | undefined,
  logText: string,
): Result<{ fresh: EncodedRecord[]; deduplicated: number }, KeelError> {
  if (expectedSeq !== undefined) {
    if (state.deleted && expectedSeq !== 0) {
      return err(
        new KeelError("deleted", `log ${logText} was deleted; an append expecting seq ${expectedSeq} cannot go on it`, {
          details: { log: logText, expected: expectedSeq },
          retryable: false,
        }),
      );
    }
    const current = state.deleted ? 0 : state.lastSeq;
    if (current !== expectedSeq) {
      return err(
        new KeelError("conflict", `log ${logText} is at seq ${current}, not ${expectedSeq}; re-read and retry`, {
          details: { log: logText, expected: expectedSeq, actual: current },
        }),
      );
    }
  }
  const fresh: EncodedRecord[] = [];
  let deduplicated = 0;
  for (const record of records) {
    const existing = state.deleted ? undefined : state.textOf(record.id);
    if (existing === undefined) fresh.push(record);
    else if (sameJsonText(existing, record.text)) deduplicated++;
    else {
      return err(
        new KeelError("conflict", `log ${logText} already holds record "${record.id}" with a different value; nothing was appended`, {
          details: { log: logText, id: record.id },
          retryable: false,
        }),
      );
    }
  }
  return ok({ fresh, deduplicated });
}

/** What a store knows of one lease name. A released lease keeps its token with `expiresAt` 0. */
export interface LeaseState {
  holder: string;
  token: number;
  expiresAt: number;
}

/** Decides an acquisition at store time `now`. */
export function decideAcquire(
  state: LeaseState | undefined,
  name: string,
  holder: string,
  now: number,
  ttlMs: number,
): { acquired: true; lease: Lease } | { acquired: false; held: Lease } {
  if (state && state.expiresAt > now) {
    if (state.holder === holder) return { acquired: true, lease: { name, holder, token: state.token, expiresAt: now + ttlMs } };
    return { acquired: false, held: { name, ...state } };
  }
  return { acquired: true, lease: { name, holder, token: (state?.token ?? 0) + 1, expiresAt: now + ttlMs } };
}

/** The `lease_held` error of an acquisition that could not wait any longer. */
export function leaseHeld(held: Lease, waitedMs: number): KeelError {
  return new KeelError(
    "lease_held",
    `lease "${held.name}" is held by "${held.holder}" until ${isoOrNumber(held.expiresAt)}; waited ${waitedMs} ms`,
    { details: { lease: held.name, holder: held.holder, expiresAt: held.expiresAt } },
  );
}

/** An epoch-ms time as ISO 8601, or as the number when it is outside a `Date`'s range (never a `RangeError`). */
function isoOrNumber(epochMs: number): string {
  const date = new Date(epochMs);
  return Number.isNaN(date.getTime()) ? `${epochMs} (epoch ms)` : date.toISOString();
}

/**
 * The time to live of a renewal without an explicit one: what is left of the lease, at least
 * 1 ms and at most `MAX_DURATION_MS` (a forged `expiresAt` cannot push the lease out of range).
 */
export function remainingTtl(expiresAt: number, now: number): number {
  return Math.min(MAX_DURATION_MS, Math.max(1, Math.floor(expiresAt - now)));
}

/** Decides a renewal at store time `now`. */
export function decideRenew(state: LeaseState | undefined, lease: Lease, now: number, ttlMs: number): Result<Lease, KeelError> {
  if (!state || state.token !== lease.token || state.holder !== lease.holder) {
    return err(leaseLost({ lease: lease.name, token: lease.token }, "was taken over by another holder"));
  }
  if (state.expiresAt <= now) return err(leaseLost({ lease: lease.name, token: lease.token }, "expired"));
  return ok({ ...lease, expiresAt: now + ttlMs });
}

/** Decides a release: the new state, or `undefined` when there is nothing to release. */
export function decideRelease(state: LeaseState | undefined, lease: Lease): LeaseState | undefined {
  if (!state || state.token !== lease.token || state.holder !== lease.holder || state.expiresAt === 0) return undefined;
  return { ...state, expiresAt: 0 };
}

/** Checks a fence at store time `now`: ok only while that token is the live lease. */
export function checkFence(state: LeaseState | undefined, fence: Fence, now: number): Result<void, KeelError> {
  if (!state || state.token !== fence.token) return err(leaseLost(fence, "was taken over by another holder"));
  if (state.expiresAt <= now) return err(leaseLost(fence, state.expiresAt === 0 ? "was released" : "expired"));
  return ok(undefined);
}
