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
import type { PoolClient } from "pg";
import { NOW_MS, read, transaction, type PostgresContext } from "./postgres-context.js";

interface LeaseRow {
  now: string;
  holder: string | null;
  token: string | null;
  expires_at: string | null;
}

/**
 * Reads a lease row locked for the rest of the transaction (`FOR SHARE` to check a fence, so a
 * takeover waits for the guarded write to commit; `FOR UPDATE` to change it) with the database
 * clock's time.
 */
async function lockLease(client: PoolClient, context: PostgresContext, name: string, mode: "SHARE" | "UPDATE"): Promise<{ now: number; state: LeaseState | undefined }> {
  const locked = await client.query<LeaseRow>(`SELECT ${NOW_MS} AS now, holder, token, expires_at FROM ${context.tables.leases} WHERE name = $1 FOR ${mode}`, [name]);
  const row = locked.rows[0] ?? (await client.query<LeaseRow>(`SELECT ${NOW_MS} AS now, NULL AS holder, NULL AS token, NULL AS expires_at`)).rows[0]!;
  const state = row.holder === null ? undefined : { holder: row.holder, token: Number(row.token), expiresAt: Number(row.expires_at) };
  return { now: Number(row.now), state };
}

/**
 * Checks a write's fence inside the caller's transaction, by the database clock, holding the
 * lease row `FOR SHARE` until the write commits: no takeover can slip between check and write.
 */
export async function checkFenceIn(client: PoolClient, context: PostgresContext, fence: Fence | undefined): Promise<Result<void, KeelError>> {
  if (!fence) return ok(undefined);
  const { now, state } = await lockLease(client, context, fence.lease, "SHARE");
  return checkFence(state, fence, now);
}

/** The lease port over `keel_leases`: row leases with fencing tokens, expiry by `clock_timestamp()`. */
export function createPostgresLeases(context: PostgresContext): LeaseStore {
  // A new name is a plain INSERT: of two first acquirers, the second hits the primary key and
  // its transaction runs again (and finds the lease held), never an upsert over the first.
  const write = (client: PoolClient, name: string, lease: LeaseState, exists: boolean) =>
    client.query(
      exists
        ? `UPDATE ${context.tables.leases} SET holder = $2, token = $3, expires_at = $4 WHERE name = $1`
        : `INSERT INTO ${context.tables.leases} (name, holder, token, expires_at) VALUES ($1, $2, $3, $4)`,
      [name, lease.holder, lease.token, lease.expiresAt],
    );
  return {
    acquire: (name, holder, options) => {
      const parsed = validateAcquire(name, holder, options);
      if (parsed.isErr()) return errAsync(parsed.error);
      const { ttlMs, waitMs } = parsed.value;
      const attempt = () =>
        transaction(context, `acquiring lease ${parsed.value.name}`, async (client) => {
          const { now, state } = await lockLease(client, context, parsed.value.name, "UPDATE");
          const decision = decideAcquire(state, parsed.value.name, parsed.value.holder, now, ttlMs);
          if (!decision.acquired) return ok<Attempt<Lease, Lease>>({ done: false, last: decision.held });
          await write(client, decision.lease.name, decision.lease, state !== undefined);
          return ok<Attempt<Lease, Lease>>({ done: true, value: decision.lease });
        });
      return pollUntil(attempt, waitMs).andThen((outcome) => (outcome.done ? okAsync(outcome.value) : errAsync(leaseHeld(outcome.last, waitMs))));
    },
    renew: (lease, options) => {
      const checked = validateLease(lease).andThen((parsed) => validateRenewOptions(options).map(({ ttlMs }) => ({ parsed, ttlMs })));
      if (checked.isErr()) return errAsync(checked.error);
      const { parsed, ttlMs } = checked.value;
      return transaction(context, `renewing lease ${parsed.name}`, async (client) => {
        const { now, state } = await lockLease(client, context, parsed.name, "UPDATE");
        const renewed = decideRenew(state, parsed, now, ttlMs ?? Math.max(1, parsed.expiresAt - now));
        if (renewed.isOk()) await write(client, parsed.name, renewed.value, true);
        return renewed;
      });
    },
    release: (lease) => {
      const parsed = validateLease(lease);
      if (parsed.isErr()) return errAsync(parsed.error);
      return transaction(context, `releasing lease ${parsed.value.name}`, async (client) => {
        const { state } = await lockLease(client, context, parsed.value.name, "UPDATE");
        const next = decideRelease(state, parsed.value);
        if (next) await write(client, parsed.value.name, next, true);
        return ok(undefined);
      });
    },
    current: (name) => {
      const parsed = validateLeaseName(name);
      if (parsed.isErr()) return errAsync(parsed.error);
      return read(context, `reading lease ${parsed.value}`, async (pool) => {
        const rows = await pool.query<{ holder: string; token: string; expires_at: string }>(
          `SELECT holder, token, expires_at FROM ${context.tables.leases} WHERE name = $1 AND expires_at > ${NOW_MS}`,
          [parsed.value],
        );
        const row = rows.rows[0];
        return ok(row ? { name: parsed.value, holder: row.holder, token: Number(row.token), expiresAt: Number(row.expires_at) } : undefined);
      });
    },
  };
}
