import { isSafeName, type KeelError } from "@keel/core";
import type { Fence, LeaseStore } from "@keel/store";
import { checkFence, createLeasePort, type LeaseState } from "@keel/store/kit";
import { err, ok, type Result, type ResultAsync } from "neverthrow";
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
async function checkFenceIn(client: PoolClient, context: PostgresContext, fence: Fence | undefined): Promise<Result<void, KeelError>> {
  if (!fence) return ok(undefined);
  // A fence naming no possible lease (not a safe name: NUL, '/', …) names none that is held, as
  // in every store; asked of the database, a NUL would fail as io_failed (text cannot hold it).
  if (!isSafeName(fence.lease)) return checkFence(undefined, fence, 0);
  const { now, state } = await lockLease(client, context, fence.lease, "SHARE");
  return checkFence(state, fence, now);
}

/** Runs `step` in one transaction once the write's fence holds in it (see `checkFenceIn`): a fenced write commits under the lease row's lock. */
export function fencedTransaction<T>(
  context: PostgresContext,
  what: string,
  fence: Fence | undefined,
  step: (client: PoolClient) => Promise<Result<T, KeelError>>,
): ResultAsync<T, KeelError> {
  return transaction(context, what, async (client) => {
    const fenced = await checkFenceIn(client, context, fence);
    return fenced.isErr() ? err(fenced.error) : step(client);
  });
}

/** The lease port over `keel_leases`: row leases with fencing tokens, expiry by `clock_timestamp()`. */
export function createPostgresLeases(context: PostgresContext): LeaseStore {
  const { leases } = context.tables;
  return createLeasePort({
    change: (name, what, decide) =>
      transaction(context, what, async (client) => {
        const { now, state } = await lockLease(client, context, name, "UPDATE");
        const change = decide(state, now);
        // A new name is a plain INSERT: of two first acquirers, the second hits the primary key
        // and its transaction runs again (and finds the lease held), never an upsert over the first.
        if (change.write) {
          await client.query(
            state
              ? `UPDATE ${leases} SET holder = $2, token = $3, expires_at = $4 WHERE name = $1`
              : `INSERT INTO ${leases} (name, holder, token, expires_at) VALUES ($1, $2, $3, $4)`,
            [name, change.write.holder, change.write.token, change.write.expiresAt],
          );
        }
        return change.result;
      }),
    live: (name, what) =>
      read(context, what, async (pool) => {
        const rows = await pool.query<{ holder: string; token: string; expires_at: string }>(`SELECT holder, token, expires_at FROM ${leases} WHERE name = $1 AND expires_at > ${NOW_MS}`, [name]);
        const row = rows.rows[0];
        return ok(row ? { name, holder: row.holder, token: Number(row.token), expiresAt: Number(row.expires_at) } : undefined);
      }),
  });
}
