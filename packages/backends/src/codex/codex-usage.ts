import { KeelError, type Usage } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { childRecord, readUsageFields, readUsageReport, withoutPart } from "../kit/index.js";

/**
 * Codex `turn.completed.usage`: `input_tokens` includes `cached_input_tokens` (and, on builds
 * that report it, `cache_write_input_tokens`); `output_tokens` includes
 * `reasoning_output_tokens`. No cost is reported. On a resumed thread the figures are the
 * thread's running total, not the turn's (see `createCodexParser`).
 *
 * @returns the usage, or `invalid_input` for an invalid field or more cached than input tokens.
 */
export function normalizeCodexUsage(raw: unknown): Result<Usage, KeelError> {
  return readUsageReport(
    "codex",
    raw,
    (record, fields) => {
      const tokens = childRecord(record, "usage") ?? record;
      return readUsageFields({
        input: fields.count(tokens, "input_tokens"),
        cached: fields.count(tokens, "cached_input_tokens"),
        cacheWrite: fields.count(tokens, "cache_write_input_tokens"),
        output: fields.count(tokens, "output_tokens"),
        reasoning: fields.count(tokens, "reasoning_output_tokens"),
      }).andThen((read) => {
        if (read.input !== null && read.cached !== null && read.cached > read.input) {
          return err(
            new KeelError("invalid_input", `codex usage reports ${read.cached} cached of only ${read.input} input tokens`, {
              details: { backend: "codex", field: "cached_input_tokens" },
            }),
          );
        }
        const uncached = withoutPart(read.input, read.cached);
        return ok({
          inputUncached: withoutPart(uncached, read.cacheWrite),
          cacheRead: read.cached,
          cacheWrite: read.cacheWrite,
          output: withoutPart(read.output, read.reasoning),
          reasoning: read.reasoning,
          costUsd: null,
        });
      });
    },
  );
}
