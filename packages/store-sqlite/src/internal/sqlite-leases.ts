import type { KeelError } from "@keel/core";
import type { Fence, Lease, LeaseStore } from "@keel/store";
import {
  checkFence,
  decideAcquire,
  decideRelease,
  decideRenew,
  leaseHeld,
  pollUntil,
  validateAcquire,
  validateLease,
  validateLeaseName,
  validateRenewOptions,
  type Attempt,
  type LeaseState,
} from "@keel/store/kit";
import { errAsync, ok, okAsync, type Result } from "neverthrow";
import { readStep, writeTransaction, type SqliteContext } from "./sqlite-context.js";

const statements = new WeakMap<SqliteContext, ReturnType<typeof prepare>>();

function prepare(context: SqliteContext) {
  const { db } = context;
  return {
    select: db.prepare<[string], { holder: string; token: number; expires_at: number }>("SELECT holder, token, expires_at FROM keel_leases WHERE name = ?"),
    upsert: db.prepare(
      "INSERT INTO keel_leases (name, holder, token, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, token = excluded.token, expires_at = excluded.expires_at",
    ),
  };
}

function leaseStatements(context: SqliteContext) {
  let prepared = statements.get(context);
  if (!prepared) {
    prepared = prepare(context);
    statements.set(context, prepared);
  }
  return prepared;
}

function readLease(context: SqliteContext, name: string): LeaseState | undefined {
  const row = leaseStatements(context).select.get(name);
  return row ? { holder: row.holder, token: row.token, expiresAt: row.expires_at } : undefined;
}

/**
 * Checks a write's fence inside the caller's write transaction: the lease row is read under the
 * same write lock as the write, so no takeover can slip between the check and the write.
 */
export function checkFenceIn(context: SqliteContext, fence: Fence | undefined): Result<void, KeelError> {
  return fence ? checkFence(readLease(context, fence.lease), fence, context.clock.now()) : ok(undefined);
}

/** The lease port over `keel_leases`, judged by this host's clock inside write transactions. */
export function createSqliteLeases(context: SqliteContext): LeaseStore {
  const write = (name: string, lease: LeaseState) => leaseStatements(context).upsert.run(name, lease.holder, lease.token, lease.expiresAt);
  return {
    acquire: (name, holder, options) => {
      const parsed = validateAcquire(name, holder, options);
      if (parsed.isErr()) return errAsync(parsed.error);
      const { ttlMs, waitMs } = parsed.value;
      const attempt = () =>
        writeTransaction(context, `acquiring lease ${parsed.value.name}`, () => {
          const decision = decideAcquire(readLease(context, parsed.value.name), parsed.value.name, parsed.value.holder, context.clock.now(), ttlMs);
          if (!decision.acquired) return ok<Attempt<Lease, Lease>>({ done: false, last: decision.held });
          write(decision.lease.name, decision.lease);
          return ok<Attempt<Lease, Lease>>({ done: true, value: decision.lease });
        });
      return pollUntil(attempt, waitMs).andThen((outcome) => (outcome.done ? okAsync(outcome.value) : errAsync(leaseHeld(outcome.last, waitMs))));
    },
    renew: (lease, options) => {
      const checked = validateLease(lease).andThen((parsed) => validateRenewOptions(options).map(({ ttlMs }) => ({ parsed, ttlMs })));
      if (checked.isErr()) return errAsync(checked.error);
      const { parsed, ttlMs } = checked.value;
      return writeTransaction(context, `renewing lease ${parsed.name}`, () => {
        const now = context.clock.now();
        return decideRenew(readLease(context, parsed.name), parsed, now, ttlMs ?? Math.max(1, parsed.expiresAt - now)).map((renewed) => {
          write(parsed.name, renewed);
          return renewed;
        });
      });
    },
    release: (lease) => {
      const parsed = validateLease(lease);
      if (parsed.isErr()) return errAsync(parsed.error);
      return writeTransaction(context, `releasing lease ${parsed.value.name}`, () => {
        const next = decideRelease(readLease(context, parsed.value.name), parsed.value);
        if (next) write(parsed.value.name, next);
        return ok(undefined);
      });
    },
    current: (name) => {
      const parsed = validateLeaseName(name);
      if (parsed.isErr()) return errAsync(parsed.error);
      return readStep(context, `reading lease ${parsed.value}`, () => {
        const state = readLease(context, parsed.value);
        return ok(state && state.expiresAt > context.clock.now() ? { name: parsed.value, ...state } : undefined);
      });
    },
  };
}
