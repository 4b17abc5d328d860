import { KeelError, validateOrThrow } from "@keel/core";
import { ResultAsync, err, ok, type Result } from "neverthrow";
import { z } from "zod";
import type { Fence, Lease, LeaseStore } from "./ports.js";
import { leaseWaitAborted } from "./poll.js";
import { MAX_DURATION_MS } from "./validation.js";

/** Options of {@link createLeaseKeeper}. */
export interface LeaseKeeperOptions {
  /** The store's leases. */
  leases: LeaseStore;
  /** This keeper's holder name (1 to 256 characters); one holder per process or per caller. */
  holder: string;
  /** Time to live of each lease, ms; renewed every `renewIntervalMs` while held. */
  ttlMs: number;
  /**
   * How often a held lease is renewed, ms; less than `ttlMs` (default a third of it, at least 10).
   * A holder whose process stalls (a GC pause, a stopped VM) longer than `ttlMs` minus this
   * interval can lose the lease: renewing more often tolerates a longer stall at the same TTL.
   */
  renewIntervalMs?: number;
  /** How long `run` waits for a lease held elsewhere before `lease_held`, ms (default 0: fail at once). */
  waitMs?: number;
  /**
   * How long a lease stays held after `run`, ms, for the next `run` of the same name (default 0:
   * released at once, so a keeper that lingers nothing holds nothing between runs and needs no `close`).
   */
  lingerMs?: number;
  /**
   * Told when a held lease's renewal fails (it expired or another holder took it): the keeper
   * stops renewing it, and writes fenced with its token fail with `lease_lost`. A throw from it is
   * ignored.
   */
  onLost?: (name: string, error: KeelError) => void;
}

/** Options of one {@link LeaseKeeper.run}. */
export interface LeaseRunOptions {
  /** Ends the wait for the lease: `aborted`, and the work does not run. */
  signal?: AbortSignal;
}

/** Holds store leases for units of work: see {@link createLeaseKeeper}. */
export interface LeaseKeeper {
  /**
   * Runs `work` while holding lease `name`, passing the fence for its writes. Errors from the
   * store (`lease_held` after `waitMs`, `invalid_input` for a bad name, `unavailable`) are the
   * result, and `work` does not run. A throw from `work` rejects, after the lease is let go.
   *
   * `options.signal` ends the wait for the lease (behind this keeper's own run of the name, or
   * for a holder elsewhere): once it is aborted before `work` starts, the run answers the
   * `KeelError` `aborted` at once, `work` never runs and a lease taken meanwhile is let go. Once
   * `work` has started, the signal is `work`'s to heed.
   */
  run<T>(name: string, work: (fence: Fence) => PromiseLike<Result<T, KeelError>>, options?: LeaseRunOptions): ResultAsync<T, KeelError>;
  /** Waits for the runs in flight, then releases every held lease and stops the timers. */
  close(): Promise<void>;
}

const OptionsSchema = z
  .strictObject({
    leases: z.custom<LeaseStore>((value) => typeof (value as LeaseStore | undefined)?.acquire === "function", "leases must be a LeaseStore"),
    holder: z.string().min(1).max(256),
    // Bounded like every store duration: a longer one would overflow the timers.
    ttlMs: z.number().int().positive().max(MAX_DURATION_MS),
    renewIntervalMs: z.number().int().positive().max(MAX_DURATION_MS).optional(),
    waitMs: z.number().int().nonnegative().max(MAX_DURATION_MS).optional(),
    lingerMs: z.number().int().nonnegative().max(MAX_DURATION_MS).optional(),
    onLost: z.custom<(name: string, error: KeelError) => void>((value) => typeof value === "function", "onLost must be a function").optional(),
  })
  .refine((options) => options.renewIntervalMs === undefined || options.renewIntervalMs < options.ttlMs, {
    message: "renewIntervalMs must be less than ttlMs: a lease renewed no sooner than it expires is lost between renewals",
    path: ["renewIntervalMs"],
  });

/** The default renewal interval: a third of the time to live, at least every 10 ms. */
function defaultRenewalIntervalMs(ttlMs: number): number {
  return Math.max(10, Math.floor(ttlMs / 3));
}

interface Held {
  lease: Lease;
  renewal: ReturnType<typeof setInterval>;
  linger: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Creates a lease keeper: the one way Keel's domain packages hold a store lease around a unit of
 * work. `run` takes the lease (waiting up to `waitMs`), renews it in the background every
 * `renewIntervalMs` (default a third of its time to live) while held, and after the work
 * releases it, or keeps it for `lingerMs` so that a burst of runs of one name pays one
 * acquisition and one release. A kept lease is checked with a read (`current`) before it is reused: one lost or taken over is
 * acquired again. Runs of one name queue behind each other in this keeper; the store lease
 * excludes other holders; the fence guards every write. A lost lease is not an error of `run`
 * (the work already ran): its fenced writes fail, and `onLost` is told. A holder that dies
 * leaves its lease to expire. Bad options throw a `KeelError` (`invalid_input`) at once.
 *
 * @example
 * ```ts
 * const keeper = createLeaseKeeper({ leases: store.leases, holder: "worker-1", ttlMs: 30_000, waitMs: 5_000 });
 * const saved = await keeper.run("mission.m1", (fence) => store.docs.put(["missions", "m1"], { done: true }, { fence }));
 * await keeper.close();
 * ```
 */
export function createLeaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { leases, holder, ttlMs, renewIntervalMs = defaultRenewalIntervalMs(ttlMs), waitMs = 0, lingerMs = 0, onLost } = validateOrThrow(OptionsSchema, options, "lease keeper options");
  const held = new Map<string, Held>();
  const queues = new Map<string, Promise<void>>();

  const drop = (name: string): Lease | undefined => {
    const entry = held.get(name);
    if (!entry) return undefined;
    clearInterval(entry.renewal);
    if (entry.linger) clearTimeout(entry.linger);
    held.delete(name);
    return entry.lease;
  };
  const release = async (name: string): Promise<void> => {
    const lease = drop(name);
    // A failed release is harmless: the lease expires by itself.
    if (lease) await leases.release(lease);
  };
  const lost = (entry: Held, error: KeelError): void => {
    if (held.get(entry.lease.name) !== entry) return;
    drop(entry.lease.name);
    try {
      onLost?.(entry.lease.name, error);
    } catch {
      // A listener's error never breaks the keeper.
    }
  };
  const keep = (lease: Lease): Lease => {
    const entry: Held = {
      lease,
      renewal: setInterval(() => {
        void leases.renew(entry.lease, { ttlMs }).match(
          (renewed) => {
            entry.lease = renewed;
          },
          // Lost: the next run acquires it again; writes fenced with the old token fail.
          (error) => lost(entry, error),
        );
      }, renewIntervalMs),
      linger: undefined,
    };
    entry.renewal.unref?.();
    held.set(lease.name, entry);
    return lease;
  };
  const ensure = async (name: string, signal: AbortSignal | undefined): Promise<Result<Lease, KeelError>> => {
    const entry = held.get(name);
    if (entry?.linger) {
      clearTimeout(entry.linger);
      entry.linger = undefined;
    }
    if (entry) {
      const current = await leases.current(name);
      if (current.isErr()) return err(current.error);
      if (current.value && current.value.holder === entry.lease.holder && current.value.token === entry.lease.token) return ok(entry.lease);
      drop(name);
    }
    return (await leases.acquire(name, holder, { ttlMs, waitMs, ...(signal === undefined ? {} : { signal }) })).map(keep);
  };
  const after = (name: string): Promise<void> => {
    const entry = held.get(name);
    if (!entry) return Promise.resolve();
    if (lingerMs === 0) return release(name);
    entry.linger = setTimeout(() => void release(name), lingerMs);
    entry.linger.unref?.();
    return Promise.resolve();
  };

  return {
    run<T>(name: string, work: (fence: Fence) => PromiseLike<Result<T, KeelError>>, options?: LeaseRunOptions): ResultAsync<T, KeelError> {
      const signal = options?.signal;
      if (signal !== undefined && !(signal instanceof AbortSignal)) {
        return new ResultAsync(Promise.resolve(err(new KeelError("invalid_input", "the lease run's signal must be an AbortSignal", { details: { what: "lease run options" } }))));
      }
      let started = false;
      const previous = queues.get(name) ?? Promise.resolve();
      const turn = previous.then(async (): Promise<Result<T, KeelError>> => {
        if (signal?.aborted) return err(leaseWaitAborted(signal));
        const lease = await ensure(name, signal);
        if (lease.isErr()) return err(lease.error);
        if (signal?.aborted) {
          await after(name);
          return err(leaseWaitAborted(signal));
        }
        started = true;
        try {
          return await work({ lease: lease.value.name, token: lease.value.token });
        } finally {
          await after(name);
        }
      });
      const settled = turn.then(
        () => undefined,
        () => undefined,
      );
      queues.set(name, settled);
      void settled.then(() => {
        if (queues.get(name) === settled) queues.delete(name);
      });
      if (signal === undefined) return new ResultAsync(turn);
      // Aborted while waiting (in this keeper's queue or for the store), the caller is answered at once.
      const answer = new Promise<Result<T, KeelError>>((resolve, reject) => {
        const onAbort = (): void => {
          if (!started) resolve(err(leaseWaitAborted(signal)));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        turn.then(
          (result) => {
            signal.removeEventListener("abort", onAbort);
            resolve(result);
          },
          (error: unknown) => {
            signal.removeEventListener("abort", onAbort);
            reject(error);
          },
        );
      });
      return new ResultAsync(answer);
    },
    async close() {
      await Promise.all([...queues.values()]);
      await Promise.all([...held.keys()].map((name) => release(name)));
    },
  };
}

