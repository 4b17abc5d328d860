import { open } from "node:fs/promises";
import { KeelError, toKeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { type VerificationSummary, VerificationSummarySchema } from "./skill-admission.js";

/** The largest verification summary file read, in bytes (a summary is a few hundred bytes). */
export const MAX_VERIFICATION_FILE_BYTES = 1_048_576;

function unreadable(file: string, why: string, details: Record<string, unknown> = {}): KeelError {
  return new KeelError("invalid_input", `verification summary ${file} ${why}`, { details: { reason: "verification_invalid", file, ...details } as never, retryable: false });
}

async function readCapped(file: string): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new KeelError("not_found", `verification summary ${file} does not exist: give the path of its JSON file`, { details: { file } });
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw unreadable(file, "is not a regular file");
    if (stat.size > MAX_VERIFICATION_FILE_BYTES) {
      throw new KeelError("too_large", `verification summary ${file} is ${stat.size} bytes, over ${MAX_VERIFICATION_FILE_BYTES}: give the summary, not the verification's evidence`, {
        details: { file, bytes: stat.size, limit: MAX_VERIFICATION_FILE_BYTES },
        retryable: false,
      });
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * Reads and validates a verification summary file (JSON, {@link VerificationSummary}; strict:
 * unknown fields are refused). Nothing is written. `not_found` when the file does not exist,
 * `too_large` past 1 MiB, `invalid_input` (`details.reason: "verification_invalid"`, with the
 * schema's `issues`) when it is not a regular file, not JSON or not a summary.
 *
 * @example
 * ```ts
 * const verification = await readVerificationSummary("verify/pdf.json");
 * if (verification.isOk()) await importSkill({ from: "./vendor/pdf", layer, role: "engineer", routing: "unclassified", verification: verification.value });
 * ```
 */
export function readVerificationSummary(file: string): ResultAsync<VerificationSummary, KeelError> {
  const checked = validate(z.string().min(1).max(4096), file, "verification summary file");
  if (checked.isErr()) return errAsync(checked.error);
  const run = async (): Promise<VerificationSummary> => {
    const bytes = await readCapped(file);
    let data: unknown;
    try {
      data = JSON.parse(bytes.toString("utf8"));
    } catch (error) {
      throw unreadable(file, `is not valid JSON (${(error as Error).message}): write it as one JSON object`);
    }
    const parsed = VerificationSummarySchema.safeParse(data);
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 20).map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
      const first = issues[0];
      throw unreadable(file, `is not a verification summary: ${first ? `${first.path || "(root)"} ${first.message}` : "schema mismatch"}`, { issues });
    }
    return parsed.data;
  };
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", `reading verification summary ${file} failed`)))();
}
