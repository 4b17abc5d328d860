import { emptyFindings, type StreamFindings } from "./turn-outcome.js";

/** One parsed stdout event: a JSON object, read loosely (fields may be missing or of another type). */
export type JsonEvent = Readonly<Record<string, unknown>>;

/**
 * Reads one run's stdout. `push` is called with every line, in order, and never throws; the
 * thread id is available as soon as the first event that carries it has been pushed, so an
 * interrupted run can still be resumed.
 */
export interface StreamParser {
  /** Feeds one stdout line (without its newline). */
  push(line: string): void;
  /** The thread id seen so far. */
  readonly threadId: string | null;
  /** What the stream showed so far. */
  findings(): StreamFindings;
}

/** How much stray (non-JSON) output a parser keeps for messages. */
export const MAX_STRAY_TEXT_CHARS = 4000;

/**
 * A {@link StreamParser} for JSONL output: blank lines are skipped, every JSON object is handed to
 * `handle` (which updates the findings; unknown event types should simply be ignored), anything
 * else counts as stray output. A throwing `handle` marks the stream corrupt instead of escaping.
 */
export function createJsonLineParser(handle: (event: JsonEvent, findings: StreamFindings) => void): StreamParser {
  const findings = emptyFindings();
  return {
    push(line) {
      const trimmed = line.trim();
      if (trimmed === "") return;
      let event: unknown;
      try {
        event = JSON.parse(trimmed);
      } catch {
        event = undefined;
      }
      if (typeof event !== "object" || event === null || Array.isArray(event)) {
        findings.strayLines += 1;
        if (findings.strayText.length < MAX_STRAY_TEXT_CHARS) {
          findings.strayText = `${findings.strayText}${trimmed.slice(0, MAX_STRAY_TEXT_CHARS - findings.strayText.length)}\n`;
        }
        return;
      }
      findings.events += 1;
      try {
        handle(event as JsonEvent, findings);
      } catch (cause) {
        findings.corruptReason ??= `an event could not be read: ${cause instanceof Error ? cause.message : String(cause)}`;
      }
    },
    get threadId() {
      return findings.threadId;
    },
    findings: () => findings,
  };
}
