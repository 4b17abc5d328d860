/**
 * `process.env` is not a plain object, so zod refuses it as a record: an `env` field is copied
 * into a plain object before an adapter validates its options. Anything else is returned
 * unchanged.
 *
 * @example
 * ```ts
 * validateOrThrow(OptionsSchema, withPlainEnv({ env: process.env }), "my backend options");
 * ```
 */
export function withPlainEnv<T>(input: T): T {
  if (typeof input !== "object" || input === null) return input;
  const env = (input as { env?: unknown }).env;
  if (typeof env !== "object" || env === null) return input;
  return { ...input, env: { ...env } };
}
