import { err, ok, type Result } from "neverthrow";
import type { z } from "zod";
import { KeelError } from "./errors.js";
import type { JsonValue } from "./json.js";

/**
 * Validates `input` against a zod schema. On failure returns `invalid_input` whose message names
 * `what` and the first problem, with every issue (path and message) in `details.issues`.
 */
export function validate<S extends z.ZodType>(schema: S, input: unknown, what: string): Result<z.output<S>, KeelError> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return ok(parsed.data);
  const issues: JsonValue[] = parsed.error.issues.map((issue) => ({
    path: issue.path.map((part) => (typeof part === "symbol" ? String(part) : part)).join("."),
    message: issue.message,
  }));
  const first = parsed.error.issues[0];
  const where = first && first.path.length > 0 ? ` at ${first.path.map(String).join(".")}` : "";
  return err(
    new KeelError("invalid_input", `invalid ${what}${where}: ${first?.message ?? "validation failed"}`, {
      details: { what, issues },
    }),
  );
}

/** Like {@link validate} but throws the `KeelError`; for constructor options (misconfiguration). */
export function validateOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = validate(schema, input, what);
  if (result.isErr()) throw result.error;
  return result.value;
}
