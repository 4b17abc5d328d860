import type { KeelError } from "@keel/core";
import type { Fence, Lease, LeaseStore } from "@keel/store";
import { ResultAsync, err, ok, type Result } from "neverthrow";

/** Options of {@link createLeaseKeeper}. */
export interface LeaseKeeperOptions {
  leases: LeaseStore;
  /** This instance's holder name. */
  holder: string;
  ttlMs: number;
  waitMs: number;
  /** How long a lease stays held after a turn, for the next turn of the same role (0: release at once). */
  lingerMs: number;
}

/** Serializes turns per lease name, in this process and across processes. */
export interface LeaseKeeper {
  /** Runs `work` while holding lease `name`, passing the fence for its writes. */
  run<T>(name: string, work: (fence: Fence) => ResultAsync<T, KeelError>): ResultAsync<T, KeelError>;
  /** Releases every held lease and stops the timers. */
  close(): Promise<void>;
}

interface Held {
  lease: Lease;
  renewal: ReturnType<typeof setInterval>;
  linger: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Keeps per-role leases. A turn takes the store lease (waiting up to `waitMs`), renews it in the
 * background at a third of its time to live while held, and after the turn keeps it for
 * `lingerMs`, so that a burst of turns of one role pays one acquisition and one release, not
 * one of each per turn. Before each turn a held lease is checked with a read (`current`): one
 * lost or taken over is acquired again. Turns of one name in this process queue behind each
 * other; the store lease excludes other processes; the fence guards every write.
 */
export function createLeaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { leases, holder, ttlMs, waitMs, lingerMs } = options;
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
  const keep = (lease: Lease): Held => {
    const entry: Held = {
      lease,
      renewal: setInterval(() => {
        void leases.renew(entry.lease, { ttlMs }).match(
          (renewed) => {
            entry.lease = renewed;
          },
          // Lost: the next turn acquires it again; writes fenced with the old token fail.
          () => void (held.get(lease.name) === entry && drop(lease.name)),
        );
      }, Math.max(10, Math.floor(ttlMs / 3))),
      linger: undefined,
    };
    entry.renewal.unref?.();
    held.set(lease.name, entry);
    return entry;
  };
  const ensure = async (name: string): Promise<Result<Lease, KeelError>> => {
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
    return (await leases.acquire(name, holder, { ttlMs, waitMs })).map((lease) => keep(lease).lease);
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
    run<T>(name: string, work: (fence: Fence) => ResultAsync<T, KeelError>): ResultAsync<T, KeelError> {
      const previous = queues.get(name) ?? Promise.resolve();
      const turn = previous.then(async (): Promise<Result<T, KeelError>> => {
        const lease = await ensure(name);
        if (lease.isErr()) return err(lease.error);
        try {
          return await work({ lease: name, token: lease.value.token });
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
      return new ResultAsync(turn);
    },
    async close() {
      await Promise.all([...queues.values()]);
      await Promise.all([...held.keys()].map((name) => release(name)));
    },
  };
}
