import type { BackendFileAccess } from "./backend-turn.js";

/**
 * A piece of the agent's text, as the backend shows it while the turn runs: a delta where the
 * backend streams tokens, otherwise each message (or the final answer) as soon as the stream
 * carries it. Concatenated, the `text` events of a turn need not equal
 * `BackendTurnResult.text` (a CLI may report its answer twice, once as a message and once as
 * the result): the result stays the answer.
 */
export interface BackendTextEvent {
  /** Discriminant. */
  type: "text";
  /** The new text. */
  text: string;
  /** When the backend saw it (epoch ms). */
  at: number;
}

/** One tool call of the agent, as soon as the backend's stream shows it. */
export interface BackendToolCallEvent {
  /** Discriminant. */
  type: "tool_call";
  /** The tool's name as the backend reports it, e.g. `Read`, `exec_command`. */
  tool: string;
  /** When the backend saw it (epoch ms). */
  at: number;
}

/**
 * One file access of the agent, as soon as the backend's stream shows it: the same access
 * `BackendTurnResult.fileAccess` lists at the end (its `bytes` may be filled in only later, when
 * the tool's result arrives).
 */
export interface BackendFileAccessEvent {
  /** Discriminant. */
  type: "file_access";
  /** The access. */
  access: BackendFileAccess;
  /** When the backend saw it (epoch ms). */
  at: number;
}

/**
 * What a backend reports while a turn runs, to the `onEvent` listener of `Backend.runTurn`:
 * plain objects with `type` and `at`. Observing never changes the turn's result; a backend that
 * cannot see inside its turn reports nothing. Listeners must accept (and may ignore) types they
 * do not know: the union may grow.
 */
export type BackendTurnEvent = BackendTextEvent | BackendToolCallEvent | BackendFileAccessEvent;

/** Receives a turn's {@link BackendTurnEvent}s as they happen. */
export type BackendTurnListener = (event: BackendTurnEvent) => void;

/**
 * Wraps a listener so that it can never break a turn: a listener that throws is ignored (its
 * error goes nowhere, like a lost progress report), and `undefined` becomes a no-op. Adapters
 * call the listener only through this.
 *
 * @example
 * ```ts
 * const emit = safeTurnListener(onEvent);
 * emit({ type: "tool_call", tool: "Read", at: Date.now() });
 * ```
 */
export function safeTurnListener(listener: BackendTurnListener | undefined): BackendTurnListener {
  if (!listener) return () => {};
  return (event) => {
    try {
      listener(event);
    } catch {
      // A progress listener's failure is the observer's problem, never the turn's.
    }
  };
}
