import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { KeelError } from "./errors.js";

/** A name that is safe as one key or path segment. Branded: obtain one through {@link parseSafeName}. */
export type SafeName = string & { readonly __safeName: unique symbol };

/** The shape of a safe name: a letter or digit, then up to 127 letters, digits, `.`, `_` or `-`. */
export const SAFE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** True when `value` is a safe name (pattern above, and not `.` or `..`). */
export function isSafeName(value: unknown): value is SafeName {
  return typeof value === "string" && SAFE_NAME_PATTERN.test(value) && value !== "." && value !== "..";
}

/** zod schema of a {@link SafeName}, with a message that says how to fix it. */
export const SafeNameSchema = z
  .string()
  .refine(isSafeName, {
    message: "not a safe name: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit",
  })
  .transform((value) => value as SafeName);

/**
 * Validates `value` as a safe name. `what` names it in the error (e.g. `"role"`), so the message
 * reads: `role "eng/../x" is not a safe name: use letters, digits, '.', '_' or '-'`.
 */
export function parseSafeName(value: unknown, what = "name"): Result<SafeName, KeelError> {
  if (isSafeName(value)) return ok(value);
  const shown = typeof value === "string" ? JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value) : String(value);
  return err(
    new KeelError(
      "invalid_input",
      `${what} ${shown} is not a safe name: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit`,
      { details: { what, value: typeof value === "string" ? value.slice(0, 200) : String(value) } },
    ),
  );
}
