import { addUsage, estimateTokens, type KeelError, type Usage } from "@keel/core";
import type { Summarizer, Transcript } from "@keel/transcript";
import { generateText, type LanguageModel, type ModelMessage } from "ai";
import { ResultAsync, okAsync } from "neverthrow";
import type { AiSdkCompactionOptions, AiSdkProviderOptions, AiSdkTelemetrySettings } from "../ai-sdk-backend-options.js";
import { aiSdkError } from "./ai-sdk-errors.js";
import { turnUsage } from "./ai-sdk-usage.js";

/** Pi's defaults: the summary's headroom and the newest context kept verbatim. */
export const DEFAULT_RESERVE_TOKENS = 16_384;
/** See {@link DEFAULT_RESERVE_TOKENS}. */
export const DEFAULT_KEEP_RECENT_TOKENS = 20_000;

/** What the compaction step needs of the turn. */
export interface CompactionCall {
  model: LanguageModel;
  backend: string;
  abortSignal: AbortSignal;
  maxRetries?: number;
  providerOptions?: AiSdkProviderOptions;
  telemetry?: AiSdkTelemetrySettings;
}

/** Whether `history` and `prompt` (estimated, conservatively) leave less than `reserveTokens` of the window. */
export function needsCompaction(history: readonly ModelMessage[], prompt: string, options: AiSdkCompactionOptions): boolean {
  const used = estimateTokens(JSON.stringify(history)) + estimateTokens(prompt);
  return used > options.contextWindow - (options.reserveTokens ?? DEFAULT_RESERVE_TOKENS);
}

/**
 * Compacts the thread with Keel's transcript compaction, the summary asked of the turn's own
 * model (Keel's summary prompt as system and user prompt). Answers the summary call's usage (the
 * turn pays for it), or `null` when nothing was compacted.
 */
export function compactThread(transcript: Transcript, options: AiSdkCompactionOptions, call: CompactionCall): ResultAsync<Usage | null, KeelError> {
  let spent: Usage | null = null;
  const summarizer: Summarizer = (request) =>
    ResultAsync.fromThrowable(
      async () =>
        generateText({
          model: call.model,
          system: request.systemPrompt,
          prompt: request.prompt,
          maxOutputTokens: request.maxTokens,
          abortSignal: call.abortSignal,
          ...(call.maxRetries === undefined ? {} : { maxRetries: call.maxRetries }),
          ...(call.providerOptions === undefined ? {} : { providerOptions: call.providerOptions }),
          ...(call.telemetry === undefined ? {} : { experimental_telemetry: call.telemetry }),
        }),
      (error) => aiSdkError(error, call.backend, transcript.sessionId),
    )().map((result) => {
      const usage = turnUsage(result.steps);
      spent = spent ? addUsage(spent, usage) : usage;
      return { text: result.text, usage };
    });
  return transcript
    .compact({
      summarizer,
      keepRecentTokens: options.keepRecentTokens ?? DEFAULT_KEEP_RECENT_TOKENS,
      reserveTokens: options.reserveTokens ?? DEFAULT_RESERVE_TOKENS,
      ...(options.customInstructions === undefined ? {} : { customInstructions: options.customInstructions }),
    })
    .andThen((entry) => okAsync(entry === null ? null : spent));
}
