import { backendError, type BackendFileAccess } from "@keel/backend";
import { emptyUsage, type JsonObject, type KeelError, type Usage } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { isTransientFailure } from "./transient-failure.js";

/**
 * What a stream parser learned from one run's stdout. Parsers fill it in line by line;
 * {@link decideTurnOutcome} turns it (and the exit) into the turn's result or error.
 */
export interface StreamFindings {
  /** The thread id from the first event that carried one. */
  threadId: string | null;
  /** The final answer text, or `null` when none was seen. */
  text: string | null;
  /** Normalized usage of this turn (summed over its steps; never a thread's running total). */
  usage: Usage;
  /** The file reads, writes and searches seen in the agent's tool calls, in order. */
  fileAccess: BackendFileAccess[];
  /** Tool calls seen (every tool, file or not). */
  toolCalls: number;
  /**
   * The tool name of each call seen, in order (`recordToolCall` keeps it; progress events report
   * it). Optional so that findings built by hand without it stay valid.
   */
  toolNames?: string[];
  /** What the adapter wants the host to keep with the thread (`BackendTurnResult.resumeState`), or `null`. */
  resumeState: JsonObject | null;
  /** Whether the CLI's terminal event (e.g. Claude's `result`) was seen. */
  terminal: boolean;
  /** Message of an in-band error event (a failure even when the process exits 0). */
  inBandError: string | null;
  /** Number of JSON events seen (known or not). */
  events: number;
  /** Number of stdout lines that were not JSON objects. */
  strayLines: number;
  /** The first stray lines (bounded), for error messages and resume-failure matching. */
  strayText: string;
  /** Why the stream is not what the CLI promises (e.g. an invalid usage field), or `null`. */
  corruptReason: string | null;
}

/** A fresh {@link StreamFindings} (nothing seen yet). */
export function emptyFindings(): StreamFindings {
  return {
    threadId: null,
    text: null,
    usage: emptyUsage(),
    fileAccess: [],
    toolCalls: 0,
    toolNames: [],
    resumeState: null,
    terminal: false,
    inBandError: null,
    events: 0,
    strayLines: 0,
    strayText: "",
    corruptReason: null,
  };
}

/** How the process ended, as far as the outcome decision needs it. */
export interface TurnExit {
  /** Exit code, or `null` when a signal ended the process. */
  exitCode: number | null;
  /** The signal that ended the process, or `null`. */
  signal: string | null;
  /** Captured stderr. */
  stderr: string;
}

/** Per-backend rules of {@link decideTurnOutcome}. */
export interface TurnOutcomeRules {
  /** Backend id (for error details). */
  backend: string;
  /** The thread being resumed, or `null` for a fresh turn. */
  resumeThreadId: string | null;
  /** The CLI's own "thread gone" messages, matched against in-band errors, stderr and stray output. */
  resumeFailure: RegExp;
  /** Exit codes that mean "thread gone" when resuming, whatever the message (e.g. none by default). */
  resumeFailureExitCodes?: readonly number[];
  /** A resume that exits 0 without a single event means the thread was not found (OpenCode). */
  emptyResumeIsFailure?: boolean;
  /** A successful fresh turn must report a thread id (resumable backends). */
  requireThreadId?: boolean;
}

/** The parsed part of a successful turn. */
export interface ParsedTurn {
  /** The final answer text ("" when the turn produced none). */
  text: string;
  /** The thread the turn ran in. */
  threadId: string | null;
  /** Normalized usage of this turn. */
  usage: Usage;
  /** File accesses seen in the tool calls. */
  fileAccess: BackendFileAccess[];
  /** Tool calls seen. */
  toolCalls: number;
  /** State to keep with the thread, when the adapter has some. */
  resumeState?: JsonObject;
}

function firstLine(text: string): string {
  const line = text
    .trim()
    .split("\n")
    .map((part) => part.trim())
    .find((part) => part !== "");
  return line === undefined ? "" : line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/**
 * Decides a finished run's outcome from what its stream showed and how it exited — pure, so
 * every adapter classifies the same way. In order:
 *
 * 1. resuming, and the CLI said the thread is gone (in-band, on stderr or as stray output; or a
 *    listed exit code; or no event at all where that is how the CLI fails) → `resume_failed`;
 * 2. an in-band error event → `backend_failed` (even with exit code 0), with the CLI's message;
 * 3. a non-zero exit or a signal → `backend_failed`, with the first line of stderr or stray output;
 *    both are `retryable` when the CLI's words say the failure is transient (`isTransientFailure`:
 *    429, 5xx, 529, overloaded);
 * 4. stray non-JSON output, an invalid field, no terminal event, or a fresh resumable turn
 *    without a thread id → `corrupt`;
 * 5. otherwise the turn succeeded.
 */
export function decideTurnOutcome(findings: StreamFindings, exit: TurnExit, rules: TurnOutcomeRules): Result<ParsedTurn, KeelError> {
  const resuming = rules.resumeThreadId !== null;
  const threadId = findings.threadId ?? rules.resumeThreadId;
  const context = { threadId, exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr };
  const failed = exit.exitCode !== 0 || exit.signal !== null;

  if (resuming) {
    const said = [findings.inBandError ?? "", exit.stderr, findings.strayText].some((text) => rules.resumeFailure.test(text));
    const byExitCode = exit.exitCode !== null && (rules.resumeFailureExitCodes ?? []).includes(exit.exitCode);
    const silent = rules.emptyResumeIsFailure === true && !failed && findings.events === 0;
    if (said || byExitCode || silent) {
      const reason = firstLine(findings.inBandError ?? "") || firstLine(exit.stderr) || firstLine(findings.strayText) || "no output";
      return err(
        backendError("resume_failed", rules.backend, `${rules.backend} could not resume thread ${rules.resumeThreadId}: ${reason}`, {
          ...context,
          threadId: rules.resumeThreadId,
        }),
      );
    }
  }
  const retryable = isTransientFailure(findings.inBandError ?? "", exit.stderr, findings.strayText);
  if (findings.inBandError !== null) {
    // The CLI's own words: its in-band message, and its stderr when that says more.
    const said = firstLine(findings.inBandError);
    const stderrLine = firstLine(exit.stderr);
    const more = stderrLine !== "" && !said.includes(stderrLine) ? ` (${stderrLine})` : "";
    const message = `${rules.backend} reported an error: ${said}${more}`;
    return err(backendError("backend_failed", rules.backend, message, { ...context, retryable }));
  }
  if (failed) {
    const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
    const why = firstLine(exit.stderr) || firstLine(findings.strayText);
    return err(backendError("backend_failed", rules.backend, `${rules.backend} ${how}${why ? `: ${why}` : ""}`, { ...context, retryable }));
  }
  const corrupt = (reason: string) =>
    err(backendError("corrupt", rules.backend, `${rules.backend} output is not what it promises: ${reason}`, context));
  if (findings.strayLines > 0) return corrupt(`${findings.strayLines} line(s) are not JSON, first: ${firstLine(findings.strayText)}`);
  if (findings.corruptReason !== null) return corrupt(findings.corruptReason);
  if (!findings.terminal) return corrupt(findings.events === 0 ? "no event at all" : "the stream ended before its final event");
  if (rules.requireThreadId === true && threadId === null) return corrupt("no thread id was reported");
  return ok({
    text: findings.text ?? "",
    threadId,
    usage: findings.usage,
    fileAccess: findings.fileAccess,
    toolCalls: findings.toolCalls,
    ...(findings.resumeState === null ? {} : { resumeState: findings.resumeState }),
  });
}
