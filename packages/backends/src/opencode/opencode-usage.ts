import type { KeelError, Usage } from "@keel/core";
import type { Result } from "neverthrow";
import { childRecord, readUsageFields, readUsageReport } from "../kit/index.js";

/**
 * OpenCode `step_finish`: `part.tokens.{input (uncached), output, reasoning, cache.read,
 * cache.write}` and `part.cost` for one step; an array of steps is summed.
 *
 * @returns the usage, or `invalid_input` for a present field that is not a valid count or cost.
 */
export function normalizeOpenCodeUsage(raw: unknown): Result<Usage, KeelError> {
  return readUsageReport(
    "opencode",
    raw,
    (record, fields) => {
      const part = childRecord(record, "part") ?? record;
      const tokens = childRecord(part, "tokens") ?? part;
      const cache = childRecord(tokens, "cache") ?? {};
      return readUsageFields({
        input: fields.count(tokens, "input"),
        output: fields.count(tokens, "output"),
        reasoning: fields.count(tokens, "reasoning"),
        cacheRead: fields.count(cache, "read"),
        cacheWrite: fields.count(cache, "write"),
        cost: fields.cost(part, "cost"),
      }).map((read) => ({
        inputUncached: read.input,
        cacheRead: read.cacheRead,
        cacheWrite: read.cacheWrite,
        output: read.output,
        reasoning: read.reasoning,
        costUsd: read.cost,
      }));
    },
  );
}
