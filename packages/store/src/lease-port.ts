import type { KeelError } from "@keel/core";
import { errAsync, ok, okAsync, type Result, type ResultAsync } from "neverthrow";
import { pollUntil, type Attempt } from "./poll.js";
import type { Lease, LeaseStore } from "./ports.js";
import { decideAcquire, decideRelease, decideRenew, leaseHeld, type LeaseState } from "./rules.js";
import { validateAcquire, validateLease, validateLeaseName, validateRenewOptions } from "./validation.js";

/*
 * The lease port whole, over one atomic step of an adapter (read a lease and the store's time
 * under a write lock, write what the rules decide): the row stores differ only in that step.
 */

/** One atomic change of a lease: what the port method returns, and the state to write (none: write nothing). */
export interface LeaseChange<T> {
  result: Result<T, KeelError>;
  write?: LeaseState | undefined;
}

/** What {@link createLeasePort} needs of an adapter: its lease rows and its clock. */
export interface LeaseRows {
  /**
   * Reads the lease `name` and the store's time under one write lock, calls `decide` with them,
   * writes the state it gives (if any) and commits; `what` names the step in an error. `decide`
   * is pure, so a transaction that runs again may call it again.
   */
  change<T>(name: string, what: string, decide: (state: LeaseState | undefined, now: number) => LeaseChange<T>): ResultAsync<T, KeelError>;
  /** The lease `name` if it is live by the store's clock (expiring after now); undefined otherwise. */
  live(name: string, what: string): ResultAsync<Lease | undefined, KeelError>;
}

/** One try at a lease, as {@link pollAcquire} asks an adapter for it: the checked arguments of `acquire`. */
export interface AcquireRequest {
  /** The lease's name, validated. */
  name: string;
  /** Who asks for it, validated. */
  holder: string;
  /** How long it is held from the moment it is acquired. */
  ttlMs: number;
}

/**
 * `acquire` over an adapter's single try: the arguments checked, then `attempt` tried at once
 * and again while the lease is held, until `waitMs` has passed (`pollUntil`); a lease still
 * held then is `lease_held`, naming its holder. The options' `signal` ends the wait (`aborted`).
 */
export function pollAcquire(
  name: unknown,
  holder: unknown,
  options: unknown,
  attempt: (request: AcquireRequest) => ResultAsync<Attempt<Lease, Lease>, KeelError>,
): ResultAsync<Lease, KeelError> {
  const parsed = validateAcquire(name, holder, options);
  if (parsed.isErr()) return errAsync(parsed.error);
  const { waitMs, signal, ...request } = parsed.value;
  return pollUntil(() => attempt(request), waitMs, signal).andThen((outcome) => (outcome.done ? okAsync(outcome.value) : errAsync(leaseHeld(outcome.last, waitMs))));
}

/**
 * The lease port over an adapter's lease rows: arguments checked, `acquire` polled within its
 * `waitMs`, and every change decided by the shared rules (`decideAcquire`, `decideRenew`,
 * `decideRelease`) inside one of the adapter's atomic steps.
 */
export function createLeasePort(rows: LeaseRows): LeaseStore {
  return {
    acquire: (name, holder, options) =>
      pollAcquire(name, holder, options, (request) =>
        rows.change(request.name, `acquiring lease ${request.name}`, (state, now): LeaseChange<Attempt<Lease, Lease>> => {
          const decision = decideAcquire(state, request.name, request.holder, now, request.ttlMs);
          return decision.acquired ? { result: ok({ done: true, value: decision.lease }), write: decision.lease } : { result: ok({ done: false, last: decision.held }) };
        }),
      ),
    renew: (lease, options) => {
      const checked = validateLease(lease).andThen((parsed) => validateRenewOptions(options).map(({ ttlMs }) => ({ parsed, ttlMs })));
      if (checked.isErr()) return errAsync(checked.error);
      const { parsed, ttlMs } = checked.value;
      return rows.change(parsed.name, `renewing lease ${parsed.name}`, (state, now) => {
        const renewed = decideRenew(state, parsed, now, ttlMs ?? Math.max(1, parsed.expiresAt - now));
        return { result: renewed, write: renewed.isOk() ? renewed.value : undefined };
      });
    },
    release: (lease) => {
      const parsed = validateLease(lease);
      if (parsed.isErr()) return errAsync(parsed.error);
      return rows.change(parsed.value.name, `releasing lease ${parsed.value.name}`, (state) => ({ result: ok(undefined), write: decideRelease(state, parsed.value) }));
    },
    current: (name) => {
      const parsed = validateLeaseName(name);
      if (parsed.isErr()) return errAsync(parsed.error);
      return rows.live(parsed.value, `reading lease ${parsed.value}`);
    },
  };
}
