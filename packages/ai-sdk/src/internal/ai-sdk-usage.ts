import { addUsage, emptyUsage, type Usage } from "@keel/core";
import { isRecord } from "./message-parts.js";

function count(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * Keel's usage of one step from the AI SDK's `LanguageModelUsage` (ai 6 and 7 alike). The SDK's
 * `inputTokens` includes the cache: the uncached part is `noCacheTokens` (Anthropic leaves cache
 * writes out of it, OpenAI reports no cache write); `outputTokens` includes reasoning, which
 * Keel counts apart. A bucket the provider did not report stays `null`. ai 6's deprecated
 * `cachedInputTokens` / `reasoningTokens` are read when the details are missing.
 */
export function stepUsage(usage: unknown): Usage {
  if (!isRecord(usage)) return emptyUsage();
  const inputDetails = isRecord(usage.inputTokenDetails) ? usage.inputTokenDetails : {};
  const outputDetails = isRecord(usage.outputTokenDetails) ? usage.outputTokenDetails : {};
  const input = count(usage.inputTokens);
  const cacheRead = count(inputDetails.cacheReadTokens) ?? count(usage.cachedInputTokens);
  const cacheWrite = count(inputDetails.cacheWriteTokens);
  const noCache = count(inputDetails.noCacheTokens);
  const inputUncached = noCache ?? (input === null ? null : Math.max(0, input - (cacheRead ?? 0) - (cacheWrite ?? 0)));
  const reasoning = count(outputDetails.reasoningTokens) ?? count(usage.reasoningTokens);
  const outputTotal = count(usage.outputTokens);
  const output = outputTotal === null ? count(outputDetails.textTokens) : reasoning === null ? outputTotal : Math.max(0, outputTotal - reasoning);
  return { inputUncached, cacheRead, cacheWrite, output, reasoning, costUsd: null };
}

/**
 * The usage of a whole turn: the sum of its steps' usages. Never `result.usage` (the last step
 * in ai 6, the sum in ai 7) nor `totalUsage` (removed in a later major): the steps mean the same
 * in both.
 */
export function turnUsage(steps: readonly { usage?: unknown }[]): Usage {
  return steps.reduce<Usage>((sum, step) => addUsage(sum, stepUsage(step.usage)), emptyUsage());
}
