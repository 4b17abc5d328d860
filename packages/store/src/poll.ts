import type { KeelError } from "@keel/core";
import { ResultAsync } from "neverthrow";

/** One try of {@link pollUntil}: done with a value, or not yet with the last thing seen. */
export type Attempt<T, L> = { done: true; value: T } | { done: false; last: L };

/**
 * Calls `attempt` until it is done or `waitMs` has passed (then resolves its last "not yet"),
 * sleeping between tries with a growing interval (5 ms doubling to 50 ms). Errors end the wait.
 * Adapters use it to wait for a held lease.
 */
export function pollUntil<T, L>(attempt: () => ResultAsync<Attempt<T, L>, KeelError>, waitMs: number): ResultAsync<Attempt<T, L>, KeelError> {
  const deadline = Date.now() + waitMs;
  const loop = async (): Promise<Attempt<T, L>> => {
    let interval = 5;
    for (;;) {
      const outcome = await attempt();
      if (outcome.isErr()) throw outcome.error;
      const remaining = deadline - Date.now();
      if (outcome.value.done || remaining <= 0) return outcome.value;
      await new Promise((resolve) => setTimeout(resolve, Math.min(interval, remaining)));
      interval = Math.min(interval * 2, 50);
    }
  };
  return ResultAsync.fromPromise(loop(), (error) => error as KeelError);
}
