import { validate, type KeelError } from "@keel/core";
import { ok, type Result } from "neverthrow";
import { z } from "zod";
import type { BackendFileAccess } from "@keel/backend";

/** Ways a scripted turn can fail, each mapped to the error code a real backend would give. */
export type ScriptedFailure = "backend_failed" | "timeout" | "hang" | "garbage" | "resume_failed" | "unavailable";

/**
 * One scripted answer. A plain string is shorthand for `{ text }`.
 *
 * `fail` makes the turn fail instead: `backend_failed` (an in-band error), `timeout` (at once, as
 * if the limit had passed), `hang` (really waits until `timeoutMs` or the abort signal),
 * `garbage` (`corrupt` output), `unavailable`, or `resume_failed` (the provider lost the
 * thread: it is forgotten; only valid on a resumed turn).
 */
export interface ScriptedReply {
  /** The answer text (default ""). */
  text?: string;
  /** Fail this turn instead of answering. */
  fail?: ScriptedFailure;
  /** Message of the failure. */
  message?: string;
  /** Output tokens to report (default `estimateTokens(text)`). */
  outputTokens?: number;
  /** Reasoning tokens to report (default 0). */
  reasoningTokens?: number;
  /** Cost to report (default `null`, unknown). */
  costUsd?: number;
  /** Wait this long before answering (real time; honours `timeoutMs` and the abort signal). */
  delayMs?: number;
  /** Duration to report (default: measured with the clock). */
  durationMs?: number;
  /** File accesses the turn reports, as a CLI adapter would read them from tool calls (default none). */
  fileAccess?: BackendFileAccess[];
  /** Tool calls the turn reports (default: one per file access); `null` plays a backend that cannot see them (unknown). */
  toolCalls?: number | null;
}

/** One earlier exchange of a scripted thread. */
export interface ScriptedExchange {
  /** The prompt the host sent. */
  prompt: string;
  /** The answer ("" for an interrupted turn). */
  text: string;
}

/** What a script function sees of the turn it answers. */
export interface ScriptedTurn {
  /** 1-based number of this call on the backend. */
  call: number;
  /** The prompt sent (on a resumed thread, only the new part). */
  prompt: string;
  /** Whether the turn continues a thread. */
  action: "fresh" | "resumed";
  /** The thread the turn runs in (`null` on a fresh-only backend). */
  threadId: string | null;
  /** 1-based number of this turn within its thread. */
  threadTurn: number;
  /** Earlier exchanges of the thread (empty on a fresh turn) — what the provider remembers. */
  history: readonly ScriptedExchange[];
  /** The requested model, or `null`. */
  model: string | null;
  /** The request's working directory. */
  cwd: string;
  /** The request's skill paths. */
  skillPaths: readonly string[];
}

/** A script function: computes the answer from the turn (e.g. a reviewer verdict from the diff in the prompt). */
export type ScriptedResponder = (turn: ScriptedTurn) => string | ScriptedReply;

/** One step of a script: a fixed answer or a function of the turn. */
export type ScriptedStep = string | ScriptedReply | ScriptedResponder;

const FAILURES = ["backend_failed", "timeout", "hang", "garbage", "resume_failed", "unavailable"] as const;
const count = z.number().int().nonnegative();

/** zod schema of {@link ScriptedReply}. */
export const ScriptedReplySchema = z.strictObject({
  text: z.string().optional(),
  fail: z.enum(FAILURES).optional(),
  message: z.string().optional(),
  outputTokens: count.optional(),
  reasoningTokens: count.optional(),
  costUsd: z.number().nonnegative().optional(),
  delayMs: count.optional(),
  durationMs: count.optional(),
  fileAccess: z
    .array(
      z.strictObject({
        op: z.enum(["read", "write", "search"]),
        path: z.string().min(1),
        bytes: count.optional(),
        tool: z.string().min(1),
      }),
    )
    .optional(),
  toolCalls: count.nullable().optional(),
}) as unknown as z.ZodType<ScriptedReply>;

/** zod schema of {@link ScriptedStep}. */
export const ScriptedStepSchema = z.union([
  z.string(),
  ScriptedReplySchema,
  z.custom<ScriptedResponder>((value) => typeof value === "function"),
]);

/** What resolving a step gave: a reply, a step the script does not have, or a step that threw. */
export type ResolvedStep = { reply: ScriptedReply } | { missing: true } | { threw: unknown };

/**
 * Resolves the step of one turn into a validated reply: a string is `{ text }`, a function is
 * called with the turn (a throw is reported, not propagated), a reply object is validated.
 */
export function resolveStep(step: ScriptedStep | undefined, turn: ScriptedTurn, what: string): Result<ResolvedStep, KeelError> {
  if (step === undefined) return ok({ missing: true });
  let produced: string | ScriptedReply;
  try {
    produced = typeof step === "function" ? step(turn) : step;
  } catch (cause) {
    return ok({ threw: cause });
  }
  return validate(ScriptedReplySchema, typeof produced === "string" ? { text: produced } : produced, what).map((reply) => ({
    reply: reply as ScriptedReply,
  }));
}

/** Waits `ms`, or less if `signal` fires; resolves whether it was aborted. */
export function waitOrAbort(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(false);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
