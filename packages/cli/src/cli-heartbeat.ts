import { CliUsageError } from "./cli-command.js";

/** The heartbeat's default period: a line every 10 seconds while a turn or a stage runs. */
export const DEFAULT_HEARTBEAT_MS = 10_000;

/**
 * `--heartbeat <seconds>` in milliseconds: 0.05 to 3600 seconds, or 0 for none (default 10 s).
 * Anything else is a usage error (exit code 2).
 */
export function parseHeartbeat(text: string | undefined): number {
  if (text === undefined) return DEFAULT_HEARTBEAT_MS;
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || (seconds !== 0 && (seconds < 0.05 || seconds > 3600))) {
    throw new CliUsageError(`--heartbeat must be a number of seconds from 0.05 to 3600, or 0 for none, got "${text}"`);
  }
  return Math.round(seconds * 1000);
}

/**
 * Calls `say` every `everyMs` with the whole seconds since the start, until the returned stop
 * function is called; with `everyMs` 0, never. The timer does not keep the process alive.
 */
export function startHeartbeat(everyMs: number, say: (seconds: number) => void): () => void {
  if (everyMs === 0) return () => undefined;
  const since = Date.now();
  const timer = setInterval(() => say(Math.round((Date.now() - since) / 1000)), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
