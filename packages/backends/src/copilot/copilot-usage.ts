import { emptyUsage, type KeelError, type Usage } from "@keel/core";
import type { Result } from "neverthrow";
import { childRecord, readUsageReport } from "../kit/index.js";

/**
 * Copilot `assistant.message` on stdout: only `data.outputTokens` (builds before 1.0.102; 1.0.102
 * prints none, see `readCopilotSessionUsage`). An array of messages is summed.
 *
 * @returns the usage, or `invalid_input` for a present field that is not a valid count.
 */
export function normalizeCopilotUsage(raw: unknown): Result<Usage, KeelError> {
  return readUsageReport(
    "copilot",
    raw,
    (record, fields) => {
      const data = childRecord(record, "data") ?? record;
      return fields.count(data, "outputTokens").map((output) => ({ ...emptyUsage(), output }));
    },
  );
}
