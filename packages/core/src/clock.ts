/**
 * A source of time. Pass one to every Keel part that reads time so that tests can control it.
 * Stores judge lease expiry by their own clock, never by a caller's.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The real clock (`Date.now()`). */
export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/** A clock that moves only when told to; for tests. */
export interface ManualClock extends Clock {
  /** Sets the time to `epochMs`. */
  set(epochMs: number): void;
  /** Moves the time forward (or back, with a negative value) by `ms`. */
  advance(ms: number): void;
}

/** Creates a {@link ManualClock} starting at `startMs` (default 2026-01-01T00:00:00Z). */
export function createManualClock(startMs = Date.UTC(2026, 0, 1)): ManualClock {
  let current = startMs;
  return {
    now: () => current,
    set: (epochMs) => {
      current = epochMs;
    },
    advance: (ms) => {
      current += ms;
    },
  };
}
