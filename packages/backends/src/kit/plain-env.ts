/**
 * `process.env` is not a plain object, so zod refuses it as a record: an `env` field is copied
 * into a plain object before an adapter validates its options. Anything else, and options whose
 * reading throws, are returned unchanged (for validation to refuse).
 *
 * @example
 * ```ts
 * validateOrThrow(OptionsSchema, withPlainEnv({ env: process.env }), "my backend options");
 * ```
 */
export function withPlainEnv<T>(input: T): T {
  if (typeof input !== "object" || input === null) return input;
  try {
    const env = (input as { env?: unknown }).env;
    if (typeof env !== "object" || env === null) return input;
    return { ...input, env: { ...env } };
  } catch {
    // Options whose reading throws (a getter, a proxy trap) go to validation as they are, which
    // refuses them with invalid_input: the copy never turns them into a raw error.
    return input;
  }
}
