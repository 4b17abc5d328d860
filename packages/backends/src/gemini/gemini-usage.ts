import { addUsage, emptyUsage, type KeelError, type Usage } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { asRecord, childRecord, readUsageFields, readUsageReport, withoutPart } from "../kit/index.js";

/** `total − input − output`: the thought tokens stream-json reports only inside its total; `null` when none. */
function thoughtTokens(total: number | null, input: number | null, output: number | null): number | null {
  if (total === null || input === null || output === null) return null;
  const thoughts = total - input - output;
  return thoughts > 0 ? thoughts : null;
}

/**
 * Gemini CLI: stream-json `result.stats.{input_tokens (= cached + input), input, cached,
 * output_tokens, total_tokens (= input_tokens + output_tokens + thoughts)}`, or json-mode `stats.models[model].tokens.{prompt, cached, candidates,
 * thoughts, tool}` summed over models (`tool` prompt tokens are outside `prompt`, `thoughts`
 * outside `candidates`).
 *
 * @returns the usage, or `invalid_input` for a present field that is not a valid count.
 */
export function normalizeGeminiUsage(raw: unknown): Result<Usage, KeelError> {
  return readUsageReport(
    "gemini",
    raw,
    (record, fields) => {
      const stats = childRecord(record, "stats") ?? record;
      const models = childRecord(stats, "models");
      if (stats.input_tokens !== undefined || models === undefined) {
        return readUsageFields({
          total: fields.count(stats, "input_tokens"),
          uncached: fields.count(stats, "input"),
          cached: fields.count(stats, "cached"),
          output: fields.count(stats, "output_tokens"),
          all: fields.count(stats, "total_tokens"),
        }).map((read) => ({
          inputUncached: read.uncached ?? withoutPart(read.total, read.cached),
          cacheRead: read.cached,
          cacheWrite: null,
          output: read.output,
          // 0.61 counts thought tokens only inside total_tokens (output_tokens is the candidates).
          reasoning: thoughtTokens(read.all, read.total, read.output),
          costUsd: null,
        }));
      }
      let sum = emptyUsage();
      for (const model of Object.values(models)) {
        const tokens = childRecord(asRecord(model) ?? {}, "tokens") ?? {};
        const read = readUsageFields({
          prompt: fields.count(tokens, "prompt"),
          cached: fields.count(tokens, "cached"),
          candidates: fields.count(tokens, "candidates"),
          thoughts: fields.count(tokens, "thoughts"),
          tool: fields.count(tokens, "tool"),
        });
        if (read.isErr()) return err(read.error);
        const { prompt, cached, candidates, thoughts, tool } = read.value;
        const uncachedPrompt = withoutPart(prompt, cached);
        const inputUncached = uncachedPrompt === null ? tool : uncachedPrompt + (tool ?? 0);
        sum = addUsage(sum, { inputUncached, cacheRead: cached, cacheWrite: null, output: candidates, reasoning: thoughts, costUsd: null });
      }
      return ok(sum);
    },
  );
}
