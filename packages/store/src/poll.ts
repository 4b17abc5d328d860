import { KeelError } from "@keel/core";
import { ResultAsync } from "neverthrow";

/** One try of {@link pollUntil}: done with a value, or not yet with the last thing seen. */
export type Attempt<T, L> = { done: true; value: T } | { done: false; last: L };

/**
 * Calls `attempt` until it is done or `waitMs` has passed (then resolves its last "not yet"),
 * sleeping between tries with a growing interval (5 ms doubling to 50 ms). Errors end the wait.
 * An aborted `signal` ends it too, with the `KeelError` `aborted`: before the first try, or
 * during a sleep (at once, not at the sleep's end); a try under way is let finish and its answer
 * kept when it is done. Adapters use it to wait for a held lease.
 */
export function pollUntil<T, L>(attempt: () => ResultAsync<Attempt<T, L>, KeelError>, waitMs: number, signal?: AbortSignal): ResultAsync<Attempt<T, L>, KeelError> {
  const deadline = Date.now() + waitMs;
  const loop = async (): Promise<Attempt<T, L>> => {
    let interval = 5;
    for (;;) {
      if (signal?.aborted) throw leaseWaitAborted(signal);
      const outcome = await attempt();
      if (outcome.isErr()) throw outcome.error;
      const remaining = deadline - Date.now();
      if (outcome.value.done || remaining <= 0) return outcome.value;
      await sleep(Math.min(interval, remaining), signal);
      interval = Math.min(interval * 2, 50);
    }
  };
  return ResultAsync.fromPromise(loop(), (error) => error as KeelError);
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The refusal of a wait for a lease that the caller's signal ended. */
export function leaseWaitAborted(signal: AbortSignal): KeelError {
  return new KeelError("aborted", "the wait for the lease was aborted by the caller", { cause: signal.reason, details: {} });
}
