import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The optional peers of `@keel/cli`: packages a user installs beside the CLI only for the
 * commands that need them, so that installing the CLI for the filesystem store compiles no
 * better-sqlite3 and pulls neither pg, the MCP SDK nor an agent SDK. Each is imported only when
 * asked for: the SQL stores by `openStore` of `@keel/runtime` for a `sqlite:` or `postgres://`
 * URL, `@keel/mcp` by `keel mcp` and `keel workflow`, `@keel/testkit` by `keel demo
 * --fake-provider`, `@keel/otel` and the OpenTelemetry SDK packages by `keel report --otlp`,
 * `@keel/ai-sdk`, `ai` and `@ai-sdk/openai-compatible` by `keel demo --backend ai-sdk`, the
 * Claude Agent SDK by `keel demo --backend claude-agent-sdk`. {@link OPTIONAL_PEER_FEATURES}
 * groups them by what needs them, with the install line.
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
  "@keel/ai-sdk",
  "ai",
  "@ai-sdk/openai-compatible",
  "@anthropic-ai/claude-agent-sdk",
] as const;

/** One of {@link OPTIONAL_PEERS}. */
export type OptionalPeer = (typeof OPTIONAL_PEERS)[number];

/** What needs some optional peers, and which: one install line. */
export interface OptionalPeerFeature {
  /** The command or option that imports them (`keel report --otlp`). */
  feature: string;
  /** The peers it needs, in install order. */
  peers: readonly OptionalPeer[];
  /** Whether the command also finds them in the project of the current directory (the demo's SDK backends), not only beside the CLI. */
  alsoInProject: boolean;
}

/** Every optional peer under the one feature that needs it (each peer in exactly one). */
export const OPTIONAL_PEER_FEATURES: readonly OptionalPeerFeature[] = [
  { feature: "sqlite:<file> store URLs", peers: ["@keel/store-sqlite"], alsoInProject: false },
  { feature: "postgres://… store URLs", peers: ["@keel/store-postgres"], alsoInProject: false },
  { feature: "keel mcp and keel workflow", peers: ["@keel/mcp"], alsoInProject: false },
  { feature: "keel demo --fake-provider", peers: ["@keel/testkit"], alsoInProject: false },
  {
    feature: "keel report --otlp",
    peers: ["@keel/otel", "@opentelemetry/api", "@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/resources"],
    alsoInProject: false,
  },
  { feature: "keel demo --backend ai-sdk", peers: ["@keel/ai-sdk", "ai", "@ai-sdk/openai-compatible"], alsoInProject: true },
  { feature: "keel demo --backend claude-agent-sdk", peers: ["@anthropic-ai/claude-agent-sdk"], alsoInProject: true },
];

/** The feature that needs `peer`. */
export function optionalPeerFeature(peer: OptionalPeer): OptionalPeerFeature {
  return OPTIONAL_PEER_FEATURES.find((feature) => feature.peers.includes(peer))!;
}

/** The install line of `peer`: `npm install` with every peer of its feature (`ai` brings `@keel/ai-sdk` and the provider too). */
export function optionalPeerInstall(peer: OptionalPeer): string {
  return installLine(optionalPeerFeature(peer));
}

function installLine(feature: OptionalPeerFeature): string {
  return `npm install ${feature.peers.join(" ")}`;
}

/** Where an installed optional peer was found. */
export interface InstalledPeer {
  name: OptionalPeer;
  /** Its `package.json` version, or `null` when not installed (or unreadable). */
  version: string | null;
  /** Its directory, or `null`. */
  path: string | null;
}

/**
 * Looks for `peer` as Node would from each of `from` (a directory): the nearest
 * `node_modules/<peer>/package.json` up the tree. Reads files only; imports nothing.
 */
export function findOptionalPeer(peer: OptionalPeer, from: readonly string[]): InstalledPeer {
  for (const start of from) {
    for (let dir = start; ; dir = dirname(dir)) {
      const root = join(dir, "node_modules", peer);
      const manifest = join(root, "package.json");
      if (existsSync(manifest)) {
        try {
          const version = (JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown }).version;
          return { name: peer, version: typeof version === "string" ? version : null, path: root };
        } catch {
          return { name: peer, version: null, path: root };
        }
      }
      if (dirname(dir) === dir) break;
    }
  }
  return { name: peer, version: null, path: null };
}

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

/** What `keel doctor` found about the optional peers of one feature. */
export interface OptionalPeerCheck {
  feature: string;
  /** Every peer of the feature, found or not. */
  peers: InstalledPeer[];
  /** Whether all of them were found. */
  installed: boolean;
  /** The line that installs them. */
  install: string;
}

/**
 * Which optional peers are installed, feature by feature: each looked for beside the CLI
 * (`cliDir`, where its lazy imports look) and, for the demo's SDK backends, in the project of
 * `cwd` too. Reads `package.json` files only; imports nothing.
 */
export function checkOptionalPeers(cliDir: string, cwd: string): OptionalPeerCheck[] {
  return OPTIONAL_PEER_FEATURES.map((feature) => {
    const peers = feature.peers.map((peer) => findOptionalPeer(peer, feature.alsoInProject ? [cliDir, cwd] : [cliDir]));
    return { feature: feature.feature, peers, installed: peers.every((peer) => peer.path !== null), install: installLine(feature) };
  });
}
