import { backendError } from "@keel/backend";
import { validate, validateOrThrow, type JsonObject, type KeelError } from "@keel/core";
import { err, type Result } from "neverthrow";
import { z } from "zod";
import {
  CLAUDE_STYLE_RESUME_FAILURE,
  asArray,
  asNumber,
  asRecord,
  asString,
  decideTurnOutcome,
  isTransientFailure,
  type Loose,
  type ParsedTurn,
  type StreamFindings,
} from "../kit/index.js";

/** Backend id of the Claude Agent SDK adapter. */
export const CLAUDE_AGENT_SDK_ID = "claude-agent-sdk";

/** What one `query()` showed, for {@link decideClaudeAgentSdkOutcome}. */
export interface ClaudeAgentSdkRun {
  /** What the Claude-style parser read from the messages. */
  findings: StreamFindings;
  /** The `result` message, as the SDK yielded it, or `undefined` when none came. */
  result: Loose | undefined;
  /** What the iterator (or `query()` itself) threw, or `undefined`. */
  thrown: unknown;
  /** Why the adapter stopped the query, or `null` when it ran to its end. */
  stop: "timeout" | "aborted" | null;
  /** The session being resumed, or `null` for a fresh turn. */
  resumeThreadId: string | null;
  /** The child's stderr as the SDK passed it on. */
  stderr: string;
  /** The turn's time limit (for the timeout message). */
  timeoutMs: number;
}

/** An object, kept as it is (a caller's record is not copied). */
const RecordSchema = z.custom<Loose>((value) => typeof value === "object" && value !== null && !Array.isArray(value), "must be an object");
/** An SDK message: its fields are read once, into a copy, inside the check (a proxy or a getter that throws is refused there). */
const MessageSchema = z.looseObject({});

/** What {@link decideClaudeAgentSdkOutcome} reads of a run: a value without it is `invalid_input`, never a TypeError. */
const RunSchema = z.looseObject({
  findings: z.looseObject({
    threadId: z.string().nullable(),
    text: z.string().nullable(),
    usage: RecordSchema,
    fileAccess: z.array(z.unknown()),
    toolCalls: z.number(),
    resumeState: RecordSchema.nullable(),
    terminal: z.boolean(),
    inBandError: z.string().nullable(),
    events: z.number(),
    strayLines: z.number(),
    strayText: z.string(),
    corruptReason: z.string().nullable(),
  }),
  result: MessageSchema.optional(),
  thrown: z.unknown(),
  stop: z.enum(["timeout", "aborted"]).nullable(),
  resumeThreadId: z.string().nullable(),
  stderr: z.string(),
  timeoutMs: z.number(),
});

/** The arguments of {@link claudeAgentSdkTurnCost}. */
const TurnCostInputSchema = z.strictObject({ result: MessageSchema, resuming: z.boolean(), resumeState: MessageSchema.nullable() });

function firstLine(text: string): string {
  const line = text
    .split("\n")
    .map((part) => part.trim())
    .find((part) => part !== "");
  return line === undefined ? "" : line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

function thrownMessage(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : thrown === undefined ? "" : String(thrown);
}

// The SDK throws these when it cannot start Claude Code at all (no platform binary, a wrong
// `pathToClaudeCodeExecutable`): nothing ran, so the backend is not usable here.
const NOT_STARTED = /ENOENT|executable not found|native binary not found|not found at|spawn .* (ENOENT|EACCES)/i;

/**
 * The cost of this turn alone. `total_cost_usd` (like `modelUsage`) continues from the totals a
 * resumed or forked session saved, so it is the turn's only on a fresh one; the SDK's
 * `model_usage_since_last_result` (not in its `.d.ts` at 0.3.336, present in its results) prices
 * the turn itself; failing both, the previous total kept in `resumeState` is subtracted.
 *
 * @throws KeelError `invalid_input` when `result` is not an object, `resuming` not a boolean or
 * `resumeState` neither an object nor `null` (a plain value answers a plain value).
 */
export function claudeAgentSdkTurnCost(given: Loose, resuming: boolean, givenState: JsonObject | null): number | null {
  const input = validateOrThrow(TurnCostInputSchema, { result: given, resuming, resumeState: givenState }, "claude-agent-sdk turn cost arguments");
  const result = input.result as Loose;
  const resumeState = input.resumeState as JsonObject | null;
  const since = asRecord(result.model_usage_since_last_result);
  const costs = Object.values(since ?? {}).map((entry) => asNumber(asRecord(entry)?.costUSD));
  if (costs.length > 0 && costs.every((cost) => cost !== undefined && cost >= 0)) {
    return costs.reduce<number>((sum, cost) => sum + (cost ?? 0), 0);
  }
  const total = asNumber(result.total_cost_usd);
  if (total === undefined || total < 0) return null;
  if (!resuming) return total;
  const previous = asNumber(resumeState?.totalCostUsd);
  return previous === undefined || previous > total ? null : total - previous;
}

/**
 * Decides one SDK turn — pure. In order:
 *
 * 1. stopped by the adapter → `timeout` or `aborted` (the thread id seen so far kept);
 * 2. resuming, and the SDK said the session is gone (`startup_failure_reason:
 *    "resume_target_not_found"`, or "No conversation found with session ID" in its errors, its
 *    stderr or what it threw) → `resume_failed`;
 * 3. an error `result` with `api_error_status` → `backend_failed`, retryable for 429, 5xx and
 *    529, not for another 4xx;
 * 4. a `result` → the kit's {@link decideTurnOutcome} (other in-band errors, garbage, success);
 *    what the iterator threw after it (the SDK always throws after an error result) never
 *    replaces it;
 * 5. no `result` and a throw → `unavailable` when Claude Code could not be started, else
 *    `backend_failed` (retryable when the text says the failure is transient);
 * 6. no `result` and no throw → `corrupt` (through {@link decideTurnOutcome}).
 *
 * `invalid_input` when `run` is not a {@link ClaudeAgentSdkRun}.
 */
export function decideClaudeAgentSdkOutcome(given: ClaudeAgentSdkRun): Result<ParsedTurn, KeelError> {
  const checked = validate(RunSchema, given, "claude-agent-sdk run");
  if (checked.isErr()) return err(checked.error);
  // The checked copy from here on: what is decided is what was read.
  const run = checked.value as unknown as ClaudeAgentSdkRun;
  const { findings, result, resumeThreadId, stderr } = run;
  const threadId = findings.threadId ?? resumeThreadId;
  const thrown = thrownMessage(run.thrown);
  if (run.stop === "timeout") {
    return err(backendError("timeout", CLAUDE_AGENT_SDK_ID, `${CLAUDE_AGENT_SDK_ID} turn did not finish within ${run.timeoutMs} ms`, { threadId, stderr }));
  }
  if (run.stop === "aborted") {
    return err(backendError("aborted", CLAUDE_AGENT_SDK_ID, `${CLAUDE_AGENT_SDK_ID} turn was aborted by the caller`, { threadId, stderr }));
  }
  if (resumeThreadId !== null) {
    const errors = asArray(result?.errors).filter((entry): entry is string => typeof entry === "string");
    const gone =
      result?.startup_failure_reason === "resume_target_not_found" ||
      [...errors, stderr, result === undefined ? thrown : ""].some((text) => CLAUDE_STYLE_RESUME_FAILURE.test(text));
    if (gone) {
      const reason = firstLine(errors.join("\n")) || firstLine(stderr) || firstLine(thrown) || "resume_target_not_found";
      return err(
        backendError("resume_failed", CLAUDE_AGENT_SDK_ID, `${CLAUDE_AGENT_SDK_ID} could not resume session ${resumeThreadId}: ${reason}`, {
          threadId: resumeThreadId,
          stderr,
        }),
      );
    }
  }
  const status = asNumber(result?.api_error_status);
  if (result !== undefined && result.is_error === true && status !== undefined) {
    const said = firstLine(asString(result.result) ?? "") || firstLine(findings.inBandError ?? "") || `HTTP ${status}`;
    return err(
      backendError("backend_failed", CLAUDE_AGENT_SDK_ID, `${CLAUDE_AGENT_SDK_ID} reported an error: ${said}`, {
        threadId,
        stderr,
        retryable: status === 429 || status >= 500,
        extra: { apiErrorStatus: status },
      }),
    );
  }
  if (result === undefined && run.thrown !== undefined) {
    if (NOT_STARTED.test(thrown)) {
      return err(
        backendError("unavailable", CLAUDE_AGENT_SDK_ID, `${CLAUDE_AGENT_SDK_ID} could not start Claude Code: ${firstLine(thrown)}`, {
          threadId,
          stderr,
          retryable: false,
          cause: run.thrown,
        }),
      );
    }
    return err(
      backendError("backend_failed", CLAUDE_AGENT_SDK_ID, `${CLAUDE_AGENT_SDK_ID} failed: ${firstLine(thrown) || "the query ended with an error"}`, {
        threadId,
        stderr,
        retryable: isTransientFailure(thrown, stderr),
        cause: run.thrown,
      }),
    );
  }
  return decideTurnOutcome(findings, { exitCode: 0, signal: null, stderr }, {
    backend: CLAUDE_AGENT_SDK_ID,
    resumeThreadId,
    resumeFailure: CLAUDE_STYLE_RESUME_FAILURE,
    requireThreadId: true,
  });
}
