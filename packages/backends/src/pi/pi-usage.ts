import type { KeelError, Usage } from "@keel/core";
import type { Result } from "neverthrow";
import { childRecord, readUsageFields, readUsageReport } from "../kit/index.js";

/**
 * pi `message_end` (assistant): `usage.{input (uncached), output, cacheRead, cacheWrite,
 * cost.total}` for one step; an array of steps is summed.
 *
 * @returns the usage, or `invalid_input` for a present field that is not a valid count or cost.
 */
export function normalizePiUsage(raw: unknown): Result<Usage, KeelError> {
  return readUsageReport(
    "pi",
    raw,
    (record, fields) => {
      const message = childRecord(record, "message");
      const tokens = (message && childRecord(message, "usage")) ?? childRecord(record, "usage") ?? record;
      const cost = childRecord(tokens, "cost");
      return readUsageFields({
        input: fields.count(tokens, "input"),
        cacheRead: fields.count(tokens, "cacheRead"),
        cacheWrite: fields.count(tokens, "cacheWrite"),
        output: fields.count(tokens, "output"),
        cost: cost ? fields.cost(cost, "total") : fields.cost(tokens, "cost"),
      }).map((read) => ({
        inputUncached: read.input,
        cacheRead: read.cacheRead,
        cacheWrite: read.cacheWrite,
        output: read.output,
        reasoning: null,
        costUsd: read.cost,
      }));
    },
  );
}
