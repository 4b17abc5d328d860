import { MAX_DURATION_MS } from "@keel/store/kit";
import { z } from "zod";

/**
 * The defaults of {@link RoleLeaseOptions}: a 30 s time to live (renewed every third of it, so
 * every 10 s), a turn waits up to 10 minutes for the lease, and it is released as soon as a turn
 * ends.
 */
export const DEFAULT_ROLE_LEASE = Object.freeze({ ttlMs: 30_000, waitMs: 600_000, lingerMs: 0 });

/**
 * The lease that serializes one role's turns in one mission across processes and hosts
 * (`role-session.<mission>.<role>`). A stateful turn (`mission`, `rolling`) holds it from before
 * it reads the capsule until after it wrote it, renewing it in the background; its capsule and
 * checkpoint writes are fenced with it.
 *
 * The trade-off is the time to live against the longest stall a host survives. When a host
 * dies or hangs, another host takes the role over once the lease expires: at most `ttlMs` after
 * its last renewal. A host that is alive but stalls (a long GC pause, a stopped or migrated VM)
 * loses the lease when the stall outlasts `ttlMs - renewIntervalMs`: another host may then take
 * the role over, and the stalled turn comes back *superseded* (its writes refused `lease_lost`,
 * `superseded: true` on its result). A short TTL fails over fast but turns a long pause into a
 * lost lease; a long TTL survives long pauses but leaves a dead host's roles waiting longer.
 * Renewing more often (a smaller `renewIntervalMs`) widens the margin at the same TTL, for one
 * more store write per interval per role in flight.
 */
export interface RoleLeaseOptions {
  /** Time to live of the lease, ms: how soon another host takes over a dead one's role (default 30,000; at least 100). */
  ttlMs?: number;
  /** How often a held lease is renewed, ms; less than `ttlMs` (default a third of `ttlMs`: 10,000 with the default TTL). */
  renewIntervalMs?: number;
  /** The longest a turn waits for the lease while another turn of the role holds it, ms; then `lease_held` (default 600,000). */
  waitMs?: number;
  /**
   * How long the lease stays held after a turn for the role's next turn in this process, ms
   * (default 0: released at once). Lingering saves a burst of one role's turns an acquisition and
   * a release each, but other hosts wait for it; call `close()` before exiting.
   */
  lingerMs?: number;
}

/** zod schema of {@link RoleLeaseOptions} (strict): a renewal interval not below the time to live is refused. */
export const RoleLeaseOptionsSchema = z
  .strictObject({
    // Bounded like every store duration: a longer one would overflow the keeper's timers.
    ttlMs: z.number().int().min(100).max(MAX_DURATION_MS).optional(),
    renewIntervalMs: z.number().int().min(10).max(MAX_DURATION_MS).optional(),
    waitMs: z.number().int().nonnegative().max(MAX_DURATION_MS).optional(),
    lingerMs: z.number().int().nonnegative().max(MAX_DURATION_MS).optional(),
  })
  .refine((lease) => lease.renewIntervalMs === undefined || lease.renewIntervalMs < (lease.ttlMs ?? DEFAULT_ROLE_LEASE.ttlMs), {
    message: `renewIntervalMs must be less than ttlMs (default ${DEFAULT_ROLE_LEASE.ttlMs}): a lease renewed no sooner than it expires is lost between renewals`,
    path: ["renewIntervalMs"],
  });
