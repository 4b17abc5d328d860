import type { KeelError, Usage } from "@keel/core";
import type { Result } from "neverthrow";
import { childRecord, readUsageFields, readUsageReport, withoutPart } from "./usage-fields.js";

/**
 * Anthropic-style usage (Claude Code; Qoder and Cursor speak the same stream, Grok Build the
 * same usage): `input_tokens` excludes the cache, cache reads and writes are separate,
 * `total_cost_usd` sits on the `result` envelope. Grok Build adds `reasoning_tokens`, counted
 * inside `output_tokens`, so they are split out, and may price in ticks (1 USD = 10^10).
 *
 * `raw` is the event that carries the usage (the `result` event) or the usage object itself; an
 * array is summed; `null` is "nothing reported" (every bucket `null`).
 *
 * @returns the usage, or `invalid_input` for a present field that is not a valid count or cost.
 */
export function normalizeClaudeCodeUsage(raw: unknown, backend = "claude-code"): Result<Usage, KeelError> {
  return readUsageReport(
    backend,
    raw,
    (record, fields) => {
      const tokens = childRecord(record, "usage") ?? record;
      return readUsageFields({
        input: fields.count(tokens, "input_tokens"),
        cacheRead: fields.count(tokens, "cache_read_input_tokens"),
        cacheWrite: fields.count(tokens, "cache_creation_input_tokens"),
        output: fields.count(tokens, "output_tokens"),
        reasoning: fields.count(tokens, "reasoning_tokens"),
        cost: fields.cost(record, "total_cost_usd"),
        ticks: fields.count(record, "total_cost_usd_ticks"),
      }).map((read) => ({
        inputUncached: read.input,
        cacheRead: read.cacheRead,
        cacheWrite: read.cacheWrite,
        output: withoutPart(read.output, read.reasoning),
        reasoning: read.reasoning,
        costUsd: read.cost ?? (read.ticks === null ? null : read.ticks / 1e10),
      }));
    },
  );
}
