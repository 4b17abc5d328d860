import { estimateTokens, totalInputTokens, validate, validateOrThrow, type KeelError, type TokenEstimator, type Usage } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";

/** What a thread's last call reported: the ground truth the next estimate builds on. */
export interface ThreadTokenBaseline {
  /** Input tokens of the last call (all input buckets). */
  inputTokens: number;
  /** Output tokens of the last call (they join the context); `null` when unknown. */
  outputTokens: number | null;
}

/** An input-token estimate of a thread's next call. */
export interface ThreadTokenEstimate {
  /** Estimated input tokens of the next call. */
  tokens: number;
  /** `calibrated`: built on the last reported input; `estimated`: the whole text estimated. */
  basis: "calibrated" | "estimated";
  /** The estimated part, margin included. */
  estimatedPart: number;
}

/** Options of {@link estimateThreadInput} and {@link createCalibratedEstimator}. */
export interface CalibratedEstimatorOptions {
  /** Estimates text that has no reported count. Default `estimateTokens` of `@keel/core`. */
  estimator?: TokenEstimator;
  /** Safety margin added to the estimated part, in percent. Default 10. */
  marginPercent?: number;
}

/** The next call's text: what was added since the last call, and the whole prompt for a cold start. */
export interface ThreadText {
  /** Text added to the thread since the last reported call (the new prompt, tool results…). */
  newText: string;
  /** The whole prompt, estimated when there is no baseline. Default `newText`. */
  fullText?: string;
}

const OptionsSchema = z.strictObject({
  estimator: z.custom<TokenEstimator>((value) => typeof value === "function", "estimator must be a function").optional(),
  marginPercent: z.number().nonnegative().max(1000).optional(),
});
const BaselineSchema = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative().nullable(),
});
const TextSchema = z.strictObject({ newText: z.string(), fullText: z.string().optional() });

/**
 * Estimates the input tokens of a thread's next call. With a baseline (the last reported usage)
 * only the new part is estimated: `input + output of the last call + estimate(newText) × (1 + margin)`.
 * Without one the whole text is estimated with the margin.
 *
 * @returns the estimate, or `invalid_input` for malformed input.
 */
export function estimateThreadInput(
  baseline: ThreadTokenBaseline | null,
  text: ThreadText,
  options: CalibratedEstimatorOptions = {},
): Result<ThreadTokenEstimate, KeelError> {
  return validate(OptionsSchema, options, "estimator options").andThen((valid) =>
    validate(BaselineSchema.nullable(), baseline, "thread baseline").andThen((checkedBaseline) =>
      validate(TextSchema, text, "thread text").map((checkedText) => {
        const estimator = valid.estimator ?? estimateTokens;
        const factor = 1 + (valid.marginPercent ?? 10) / 100;
        if (checkedBaseline === null) {
          const estimatedPart = Math.ceil(estimator(checkedText.fullText ?? checkedText.newText) * factor);
          return { tokens: estimatedPart, basis: "estimated" as const, estimatedPart };
        }
        const estimatedPart = Math.ceil(estimator(checkedText.newText) * factor);
        const known = checkedBaseline.inputTokens + (checkedBaseline.outputTokens ?? 0);
        return { tokens: known + estimatedPart, basis: "calibrated" as const, estimatedPart };
      }),
    ),
  );
}

/** Remembers each thread's last reported usage and estimates its next call from it. */
export interface CalibratedEstimator {
  /** Records a call's reported usage as the thread's baseline; a usage without input counts forgets it. */
  observe(threadId: string, usage: Usage): void;
  /** Estimates the thread's next input (see {@link estimateThreadInput}). */
  estimate(threadId: string, text: ThreadText): Result<ThreadTokenEstimate, KeelError>;
  /** Drops a thread's baseline (e.g. after a rotation or compaction). */
  forget(threadId: string): void;
}

/**
 * Creates a {@link CalibratedEstimator}: `estimateTokens` is the fallback, and once a thread has
 * reported its input tokens only what was added since is estimated, with a margin.
 *
 * @throws KeelError `invalid_input` for malformed options.
 */
export function createCalibratedEstimator(options: CalibratedEstimatorOptions = {}): CalibratedEstimator {
  const valid = validateOrThrow(OptionsSchema, options, "estimator options") as CalibratedEstimatorOptions;
  const baselines = new Map<string, ThreadTokenBaseline>();
  return Object.freeze({
    observe(threadId: string, usage: Usage) {
      const inputTokens = totalInputTokens(usage);
      if (inputTokens === null) baselines.delete(threadId);
      else baselines.set(threadId, { inputTokens, outputTokens: usage.output });
    },
    estimate: (threadId: string, text: ThreadText) => estimateThreadInput(baselines.get(threadId) ?? null, text, valid),
    forget(threadId: string) {
      baselines.delete(threadId);
    },
  });
}
