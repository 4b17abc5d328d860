import type { KeelError } from "@keel/core";
import type { Fence, LeaseStore } from "@keel/store";
import { checkFence, createLeasePort, type LeaseState } from "@keel/store/kit";
import { ok, type Result } from "neverthrow";
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
  return createLeasePort({
    change: (name, what, decide) =>
      writeTransaction(context, what, () => {
        const change = decide(readLease(context, name), context.clock.now());
        if (change.write) leaseStatements(context).upsert.run(name, change.write.holder, change.write.token, change.write.expiresAt);
        return change.result;
      }),
    live: (name, what) =>
      readStep(context, what, () => {
        const state = readLease(context, name);
        return ok(state && state.expiresAt > context.clock.now() ? { name, ...state } : undefined);
      }),
  });
}
