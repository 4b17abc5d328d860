import { KeelError } from "@keel/core";
import type { Fence, LeaseStore } from "@keel/store";
import { err, ok, type Result } from "neverthrow";

/**
 * Runs `work` holding the run's lease: acquired without waiting (a live holder means another
 * step is running: `lease_held`), renewed at a third of its time to live while `work` runs, and
 * released afterwards whatever the outcome. The fence goes on the run's final write, so a step
 * that lost its lease (it stalled past the TTL and another step took over) writes nothing.
 * A holder that dies leaves the lease to expire; the next step takes it over.
 */
export async function withRunLease<T>(
  leases: LeaseStore,
  name: string,
  holder: string,
  ttlMs: number,
  work: (fence: Fence) => Promise<Result<T, KeelError>>,
): Promise<Result<T, KeelError>> {
  const acquired = await leases.acquire(name, holder, { ttlMs, waitMs: 0 });
  if (acquired.isErr()) return err(acquired.error);
  let held = acquired.value;
  const timer = setInterval(() => {
    void leases.renew(held, { ttlMs }).map((renewed) => {
      held = renewed;
    });
  }, Math.max(10, Math.floor(ttlMs / 3)));
  timer.unref?.();
  try {
    const outcome = await work({ lease: held.name, token: held.token });
    return outcome.isOk() ? ok(outcome.value) : err(outcome.error);
  } catch (error) {
    return err(new KeelError("io_failed", `a workflow step failed unexpectedly: ${(error as Error).message}`, { cause: error }));
  } finally {
    clearInterval(timer);
    await leases.release(held);
  }
}
