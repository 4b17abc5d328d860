/**
 * The optional peers of `@keel/cli`: packages a user installs beside the CLI only for the
 * commands that need them, so that installing the CLI for the filesystem store compiles no
 * better-sqlite3 and pulls neither pg nor the MCP SDK. Each is imported only when asked for:
 * the SQL stores by `openStore` of `@keel/runtime` for a `sqlite:` or `postgres://` URL,
 * `@keel/mcp` by `keel mcp` and `keel workflow`, `@keel/testkit` by `keel demo --fake-provider`,
 * `@keel/otel` and the OpenTelemetry SDK packages by `keel report --otlp`.
 */
export const OPTIONAL_PEERS = [
  "@keel/store-sqlite",
  "@keel/store-postgres",
  "@keel/mcp",
  "@keel/testkit",
  "@keel/otel",
  "@opentelemetry/api",
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/resources",
] as const;

/** One of {@link OPTIONAL_PEERS}. */
export type OptionalPeer = (typeof OPTIONAL_PEERS)[number];

/**
 * The optional peer that `error` (an import's failure) says is not installed, or undefined for
 * any other failure: Node's "Cannot find package '<name>'" for the package itself, not for one
 * of its own dependencies (that is a broken install, and reinstalling is the fix).
 */
export function missingOptionalPeer(error: unknown): OptionalPeer | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (code !== undefined && code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return undefined;
  const named = /Cannot find (?:package|module) '([^']+)'/.exec(error.message)?.[1];
  return OPTIONAL_PEERS.find((peer) => named === peer || named?.startsWith(`${peer}/`) === true);
}
