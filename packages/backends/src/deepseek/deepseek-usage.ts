import type { KeelError, Usage } from "@keel/core";
import type { Result } from "neverthrow";
import { childRecord, readUsageFields, readUsageReport, withoutPart } from "../kit/index.js";

/**
 * DeepSeek (OpenAI-compatible chat completions): `usage.{prompt_tokens, completion_tokens,
 * prompt_cache_hit_tokens, prompt_cache_miss_tokens, completion_tokens_details.reasoning_tokens}`
 * (or the OpenAI `prompt_tokens_details.cached_tokens`). Reasoning is inside `completion_tokens`.
 *
 * @returns the usage, or `invalid_input` for a present field that is not a valid count.
 */
export function normalizeDeepSeekUsage(raw: unknown): Result<Usage, KeelError> {
  return readUsageReport(
    "deepseek",
    raw,
    (record, fields) => {
      const tokens = childRecord(record, "usage") ?? record;
      const completionDetails = childRecord(tokens, "completion_tokens_details") ?? {};
      const promptDetails = childRecord(tokens, "prompt_tokens_details") ?? {};
      return readUsageFields({
        prompt: fields.count(tokens, "prompt_tokens"),
        completion: fields.count(tokens, "completion_tokens"),
        hit: fields.count(tokens, "prompt_cache_hit_tokens"),
        miss: fields.count(tokens, "prompt_cache_miss_tokens"),
        cached: fields.count(promptDetails, "cached_tokens"),
        reasoning: fields.count(completionDetails, "reasoning_tokens"),
      }).map((read) => {
        const cacheRead = read.hit ?? read.cached;
        return {
          inputUncached: read.miss ?? withoutPart(read.prompt, cacheRead),
          cacheRead,
          cacheWrite: null,
          output: withoutPart(read.completion, read.reasoning),
          reasoning: read.reasoning,
          costUsd: null,
        };
      });
    },
  );
}
