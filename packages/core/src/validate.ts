import { err, ok, type Result } from "neverthrow";
import type { z } from "zod";
import { KeelError } from "./errors.js";
import type { JsonValue } from "./json.js";

/**
 * Validates `input` against a zod schema. On failure returns `invalid_input` whose message names
 * `what` and the first problem, with every issue (path and message) in `details.issues`. Total:
 * an input whose reading throws (a getter, a proxy trap; zod rethrows those) is `invalid_input`
 * too, never a throw.
 */
export function validate<S extends z.ZodType>(schema: S, input: unknown, what: string): Result<z.output<S>, KeelError> {
  try {
    const parsed = schema.safeParse(input);
    if (parsed.success) return ok(parsed.data);
    // zod builds its issues lazily, and building them can read the input again (a message that
    // names a received type reads a proxy's prototype): inside the try, like the parse.
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
  } catch (error) {
    return err(unreadable(what, error));
  }
}

/**
 * {@link validate} with a fast path for hot entry points. `accept(input)` answers the value the
 * schema would produce for a common, plainly well-formed input, or `undefined` for anything
 * else, which the schema then validates (and, when bad, reports as {@link validate} does). zod
 * stays the judge: an `accept` may answer only for inputs that the schema accepts, with the
 * schema's own output, and each one is checked against its schema by property tests.
 *
 * Why: a zod parse costs little in a tight loop, but it runs a lot of general code over the
 * schema's object graph. Right after an I/O wait (a durable write's fsync), when the caches are
 * cold, that costs many times its warm price.
 *
 * Use it only where a benchmark shows the difference matters to a user (today: the LangGraph
 * checkpointer's input, for its target against SqliteSaver). Elsewhere, {@link validate} once
 * at the boundary: the store's conditions and leases went back to it (a few microseconds beside
 * a durable write, bench/README.md).
 */
export function validateFast<S extends z.ZodType>(
  schema: S,
  input: unknown,
  what: string,
  accept: (input: unknown) => z.output<S> | undefined,
): Result<z.output<S>, KeelError> {
  let accepted: z.output<S> | undefined;
  try {
    accepted = accept(input);
  } catch (error) {
    return err(unreadable(what, error));
  }
  return accepted !== undefined ? ok(accepted) : validate(schema, input, what);
}

/** The refusal of an input whose reading threw. */
function unreadable(what: string, cause: unknown): KeelError {
  return new KeelError("invalid_input", `invalid ${what}: reading it threw`, { cause, details: { what } });
}

/**
 * True for a plain object (an object literal, or one made by `Object.create(null)`) whose own
 * enumerable keys all appear in `keys`: the shape a fast `accept` of {@link validateFast} starts from.
 */
export function isPlainObjectOf(value: unknown, keys: readonly string[]): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  for (const key of Object.keys(value)) if (!keys.includes(key)) return false;
  return true;
}

/** True for a non-negative safe integer (what `z.number().int().nonnegative()` accepts, up to 2^53 - 1). */
export function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** Like {@link validate} but throws the `KeelError`; for constructor options (misconfiguration). */
export function validateOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = validate(schema, input, what);
  if (result.isErr()) throw result.error;
  return result.value;
}
