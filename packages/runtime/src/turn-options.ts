import type { BackendTurnEvent } from "@keel/backend";
import { z } from "zod";

/**
 * One thing the backend reported while a role turn ran (its text, a tool call, a file access:
 * a `BackendTurnEvent`), with the turn it belongs to. In a round, `role` tells the three turns
 * apart.
 */
export type RoleTurnProgress = BackendTurnEvent & {
  /** The turn's mission. */
  missionId: string;
  /** The turn's role. */
  role: string;
  /** The backend running the turn. */
  backend: string;
};

/**
 * How the caller controls and observes {@link Keel.runRoleTurn} and {@link Keel.runRound} while
 * they run. Neither changes what a finished turn returns.
 */
export interface TurnOptions {
  /**
   * Aborts the turn (or the round: its current turn, and no later one starts). The backend's own
   * cancellation ends it — a CLI's process group is killed, an in-process loop stops — the
   * budget reservation is settled with the time used (tokens and cost unknown, so charged as
   * reserved), and the turn answers the `KeelError` `aborted`. Already aborted, or aborted while
   * the turn waits for its role's lease: it answers at once, nothing runs and nothing is reserved.
   */
  signal?: AbortSignal;
  /**
   * Receives the backend's events as they arrive: text (deltas where the backend streams, whole
   * messages otherwise), tool calls and file accesses, in stream order. A backend that cannot see
   * inside its turn reports nothing. A listener that throws is ignored: it never breaks the turn.
   * See {@link turnProgress} for an async iterable instead.
   */
  onProgress?: (event: RoleTurnProgress) => void;
}

/** zod schema of {@link TurnOptions}. Unknown keys are rejected. */
export const TurnOptionsSchema = z.strictObject({
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, "signal must be an AbortSignal").optional(),
  onProgress: z.custom<(event: RoleTurnProgress) => void>((value) => typeof value === "function", "onProgress must be a function").optional(),
});

/** A turn's progress as an async iterable: pass {@link TurnProgressStream.onProgress} to the turn, iterate the stream. */
export interface TurnProgressStream extends AsyncIterable<RoleTurnProgress> {
  /** The listener to pass as {@link TurnOptions.onProgress}. */
  readonly onProgress: (event: RoleTurnProgress) => void;
  /** Ends the iteration once the events received so far are read (call it when the turn settled). */
  end(): void;
}

/**
 * An async iterable of a turn's progress events, fed by its `onProgress`. Events are buffered
 * until read; `end()` (call it when the turn's result arrived, in a `finally`) lets the loop
 * finish after the last one. One reader at a time.
 *
 * @example
 * ```ts
 * const progress = turnProgress();
 * const turn = keel.runRoleTurn(input, { onProgress: progress.onProgress });
 * void turn.then(() => progress.end());
 * for await (const event of progress) if (event.type === "tool_call") console.log(event.role, event.tool);
 * const result = await turn;
 * ```
 */
export function turnProgress(): TurnProgressStream {
  const buffered: RoleTurnProgress[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const signal = () => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  return {
    onProgress: (event) => {
      if (ended) return;
      buffered.push(event);
      signal();
    },
    end: () => {
      ended = true;
      signal();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const next = buffered.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (ended) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
  };
}
