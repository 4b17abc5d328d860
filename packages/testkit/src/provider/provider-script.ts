import type { Usage } from "@keel/core";
import { z } from "zod";

/**
 * The four wire formats the fake provider speaks:
 *
 * - `anthropic-messages` — `POST …/v1/messages` (Claude Code, pi, Copilot in anthropic mode).
 * - `openai-chat` — `POST …/chat/completions` (OpenCode, Copilot, pi).
 * - `openai-responses` — `POST …/responses` (Codex, pi, Copilot in responses mode).
 * - `gemini` — `POST …/models/<model>:generateContent` or `:streamGenerateContent` (Gemini CLI, pi).
 */
export type FakeProviderFormat = "anthropic-messages" | "openai-chat" | "openai-responses" | "gemini";

/**
 * Token usage the provider bills for one reply, in Keel's disjoint buckets (see `Usage` in
 * `@keel/core`). Each wire format spells it its own way: OpenAI and Gemini report the whole input
 * (`inputUncached + cacheRead + cacheWrite`) with the cached part inside it and have no
 * cache-write bucket; Anthropic reports the three input buckets apart; here `output` is the
 * whole output with `reasoning` inside it, as OpenAI counts (Gemini reports them apart). Use {@link reportedUsage} for the `Usage` a faithful
 * adapter derives from what was sent.
 */
export interface FakeUsage {
  /** Input tokens neither read from nor written to the cache. */
  inputUncached: number;
  /** Input tokens read from the cache (default 0). */
  cacheRead?: number;
  /** Input tokens written to the cache (default 0; only Anthropic can report it). */
  cacheWrite?: number;
  /** Output tokens, reasoning included. */
  output: number;
  /** Of `output`, the reasoning tokens (default 0). */
  reasoning?: number;
}

/** One tool call the model asks for. */
export interface FakeToolCall {
  /** Call id (default: one made up per request, `call_<n>`). */
  id?: string;
  /** Tool name as the CLI declared it (`bash`, `read`, `Bash`, `exec_command`, `run_shell_command` …). */
  name: string;
  /** The tool's arguments. */
  arguments: Record<string, unknown>;
}

/** A model answer: text, tool calls or both. */
export interface FakeTurnReply {
  /** Assistant text. */
  text?: string;
  /** Tool calls, after the text. With any, the stop reason is the format's "tool use". */
  toolCalls?: readonly FakeToolCall[];
  /** Usage reported for this reply (default 100 uncached input, 10 output). */
  usage?: FakeUsage;
  /** Wait this long before answering. */
  delayMs?: number;
}

/** An error answer with an HTTP status, in the format's own error body. */
export interface FakeErrorReply {
  error: {
    /** HTTP status: 429, 500, 503, 529 (Anthropic's "overloaded") … */
    status: number;
    /** Error message (default `fake provider error <status>`). */
    message?: string;
    /** The format's error type (default by status, e.g. `overloaded_error`, `rate_limit_error`). */
    type?: string;
    /** Sent as the `retry-after` header. */
    retryAfterSeconds?: number;
  };
  /** Wait this long before answering. */
  delayMs?: number;
}

/** Accept the request and never answer (a provider that hangs). */
export interface FakeHangReply {
  hang: true;
}

/** What the fake provider answers one model request with. */
export type FakeReply = FakeTurnReply | FakeErrorReply | FakeHangReply;

const count = z.number().int().nonnegative();

/** zod schema of {@link FakeUsage}. */
export const FakeUsageSchema = z
  .strictObject({
    inputUncached: count,
    cacheRead: count.optional(),
    cacheWrite: count.optional(),
    output: count,
    reasoning: count.optional(),
  })
  .refine((usage) => (usage.reasoning ?? 0) <= usage.output, { message: "reasoning is part of output: it cannot exceed it" });

const delayMs = z.number().int().nonnegative().max(600_000).optional();

/** zod schema of {@link FakeReply}. */
export const FakeReplySchema = z.union([
  z.strictObject({ hang: z.literal(true) }),
  z.strictObject({
    error: z.strictObject({
      status: z.number().int().min(400).max(599),
      message: z.string().optional(),
      type: z.string().min(1).optional(),
      retryAfterSeconds: count.optional(),
    }),
    delayMs,
  }),
  z
    .strictObject({
      text: z.string().optional(),
      toolCalls: z
        .array(
          z.strictObject({
            id: z.string().min(1).optional(),
            name: z.string().min(1),
            arguments: z.record(z.string(), z.unknown()),
          }),
        )
        .optional(),
      usage: FakeUsageSchema.optional(),
      delayMs,
    })
    .refine((reply) => reply.text !== undefined || (reply.toolCalls?.length ?? 0) > 0, {
      message: "a reply needs text or at least one tool call (or use { hang: true } / { error })",
    }),
]);

/** The usage a reply reports when its script names none. */
export const DEFAULT_FAKE_USAGE: Readonly<Required<FakeUsage>> = { inputUncached: 100, cacheRead: 0, cacheWrite: 0, output: 10, reasoning: 0 };

/** {@link FakeUsage} with every bucket filled in. */
export function fullUsage(usage: FakeUsage | undefined): Required<FakeUsage> {
  const given = usage ?? DEFAULT_FAKE_USAGE;
  return {
    inputUncached: given.inputUncached,
    cacheRead: given.cacheRead ?? 0,
    cacheWrite: given.cacheWrite ?? 0,
    output: given.output,
    reasoning: given.reasoning ?? 0,
  };
}

/**
 * The Keel `Usage` an adapter must report for `usage` sent in `format`, bucket by bucket — what
 * "exactly the usage the server reported" means per wire format. Keel's buckets are disjoint:
 * where the format reports reasoning apart (OpenAI, Gemini) `output` is the rest of the output
 * and `reasoning` the reasoning; Anthropic splits no reasoning out (`reasoning` is `null`, the
 * tokens stay in `output`). OpenAI's and Gemini's cache writes are not reportable (they count as
 * uncached input). `costUsd` is `null` (the fake bills no money).
 *
 * @example
 * ```ts
 * reportedUsage("openai-responses", { inputUncached: 80, cacheRead: 20, output: 7, reasoning: 3 });
 * // → { inputUncached: 80, cacheRead: 20, cacheWrite: null, output: 4, reasoning: 3, costUsd: null }
 * ```
 */
export function reportedUsage(format: FakeProviderFormat, usage: FakeUsage | undefined): Usage {
  const full = fullUsage(usage);
  if (format === "anthropic-messages") {
    return { inputUncached: full.inputUncached, cacheRead: full.cacheRead, cacheWrite: full.cacheWrite, output: full.output, reasoning: null, costUsd: null };
  }
  return {
    inputUncached: full.inputUncached + full.cacheWrite,
    cacheRead: full.cacheRead,
    cacheWrite: null,
    output: full.output - full.reasoning,
    reasoning: full.reasoning,
    costUsd: null,
  };
}
