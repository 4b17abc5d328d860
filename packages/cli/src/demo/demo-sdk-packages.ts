import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Backend } from "@keel/backend";
import { CLAUDE_AGENT_SDK_PACKAGE, loadClaudeAgentSdkQuery, type ClaudeAgentSdkQuery } from "@keel/backends/claude-agent-sdk";
import { KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { findOptionalPeer, missingOptionalPeer, optionalPeerFeature, optionalPeerInstall, type OptionalPeer } from "../internal/optional-peers.js";

/**
 * The in-process SDK backends `keel demo --backend <id> --fake-provider` runs: the agent loop runs
 * in this process (the AI SDK) or the SDK's own Claude Code child (the Claude Agent SDK), not a CLI
 * on `PATH`. Their packages are the host's, never dependencies of the CLI (the Claude Agent SDK
 * carries a ~400 MiB binary): they are imported only when asked for.
 */
export const DEMO_SDK_BACKENDS = ["ai-sdk", "claude-agent-sdk"] as const;

/** One of {@link DEMO_SDK_BACKENDS}. */
export type DemoSdkBackend = (typeof DEMO_SDK_BACKENDS)[number];

/** What the `ai-sdk` demo uses of `@keel/ai-sdk` and `@ai-sdk/openai-compatible` (typed here: neither is a dependency of the CLI). */
export interface DemoAiSdkPackages {
  kind: "ai-sdk";
  createAiSdkBackend(options: {
    model: unknown;
    tools: Record<string, unknown>;
    system: string;
    store: KeelStore;
    maxRetries: number;
    toolFileAccess: Record<string, { op: "read" | "write" | "search"; pathArgument: string; contentArgument?: string }>;
  }): Backend;
  createOpenAICompatible(settings: { name: string; baseURL: string; apiKey: string; includeUsage: boolean }): (modelId: string) => unknown;
}

/** The Claude Agent SDK's `query` for the `claude-agent-sdk` demo. */
export interface DemoClaudeAgentSdkPackages {
  kind: "claude-agent-sdk";
  query: ClaudeAgentSdkQuery;
}

/** The packages of an SDK backend, loaded by {@link loadDemoSdkPackages}. */
export type DemoSdkPackages = DemoAiSdkPackages | DemoClaudeAgentSdkPackages;

/**
 * Loads the packages of the SDK backend `id`, before the demo writes anything: from beside the
 * CLI (a global install, `npx -p`), else from the project in `cwd` (its `node_modules`, or a
 * parent's). A missing package is a `KeelError` `unavailable` naming the install line; one that
 * is installed but does not load is `unavailable` too, with the loader's first line.
 */
export async function loadDemoSdkPackages(id: DemoSdkBackend, cwd: string): Promise<DemoSdkPackages> {
  if (id === "claude-agent-sdk") {
    // The backends package's own loader gives the typed, helpful error; only where it looks changes.
    return { kind: id, query: await loadClaudeAgentSdkQuery(() => importPeer(CLAUDE_AGENT_SDK_PACKAGE, cwd)) };
  }
  // The one list of what the AI SDK demo needs: its feature among the CLI's optional peers.
  const needed = optionalPeerFeature("@keel/ai-sdk").peers;
  const install = optionalPeerInstall("@keel/ai-sdk");
  const load = async (name: OptionalPeer): Promise<Record<string, unknown>> => {
    try {
      return (await importPeer(name, cwd)) as Record<string, unknown>;
    } catch (error) {
      const first = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
      // `ai` is loaded by @keel/ai-sdk: its absence is named too, not taken for a broken install.
      const peer = missingOptionalPeer(error);
      const missing = peer !== undefined && needed.includes(peer) ? peer : undefined;
      throw new KeelError(
        "unavailable",
        missing !== undefined
          ? `keel demo --backend ai-sdk needs ${missing}, which is not installed beside @keel/cli or in ${cwd}: ${install}`
          : `${name} is installed but cannot be loaded (${first}): reinstall it (${install})`,
        { details: { backend: id, package: missing ?? name, install }, ...(missing !== undefined ? {} : { cause: error }) },
      );
    }
  };
  const keel = await load("@keel/ai-sdk");
  const provider = await load("@ai-sdk/openai-compatible");
  if (typeof keel.createAiSdkBackend !== "function" || typeof provider.createOpenAICompatible !== "function") {
    throw new KeelError("unavailable", `@keel/ai-sdk or @ai-sdk/openai-compatible is not a version this demo knows (createAiSdkBackend, createOpenAICompatible): ${install}`, {
      details: { backend: id, install },
    });
  }
  return {
    kind: id,
    createAiSdkBackend: keel.createAiSdkBackend as DemoAiSdkPackages["createAiSdkBackend"],
    createOpenAICompatible: provider.createOpenAICompatible as DemoAiSdkPackages["createOpenAICompatible"],
  };
}

/**
 * Imports the package `name` from beside this module (where Node finds the CLI's own packages),
 * else the ESM entry of the one installed in the project at `cwd` or a parent directory. When
 * neither has it, the first import's "Cannot find package" error is rethrown as it was.
 */
async function importPeer(name: OptionalPeer, cwd: string): Promise<unknown> {
  try {
    // A specifier in a variable: neither tsc nor a bundler tries to resolve the optional package.
    return await import(/* @vite-ignore */ name);
  } catch (error) {
    if (missingOptionalPeer(error) !== name) throw error;
    const entry = projectEntry(name, cwd);
    if (entry === undefined) throw error;
    return import(/* @vite-ignore */ pathToFileURL(entry).href);
  }
}

/** The ESM entry of package `name` in the nearest `node_modules` from `cwd` up, or undefined. */
function projectEntry(name: OptionalPeer, cwd: string): string | undefined {
  const root = findOptionalPeer(name, [cwd]).path;
  if (root === null) return undefined;
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports?: unknown; module?: unknown; main?: unknown };
  const target = exportTarget(typeof manifest.exports === "object" && manifest.exports !== null && "." in manifest.exports ? (manifest.exports as Record<string, unknown>)["."] : manifest.exports);
  const file = target ?? (typeof manifest.module === "string" ? manifest.module : typeof manifest.main === "string" ? manifest.main : "index.js");
  return join(root, file);
}

/** The file an `exports` entry gives an ESM import in Node (conditions `node`, `import`, `default`). */
function exportTarget(entry: unknown): string | undefined {
  if (typeof entry === "string") return entry;
  if (Array.isArray(entry)) return entry.map(exportTarget).find((target) => target !== undefined);
  if (typeof entry !== "object" || entry === null) return undefined;
  for (const [condition, value] of Object.entries(entry)) {
    if (condition === "node" || condition === "import" || condition === "default") {
      const target = exportTarget(value);
      if (target !== undefined) return target;
    }
  }
  return undefined;
}
