import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Backend } from "@keel/backend";
import { CLAUDE_AGENT_SDK_PACKAGE, loadClaudeAgentSdkQuery, type ClaudeAgentSdkQuery } from "@keel/backends/claude-agent-sdk";
import { KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";

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

/** What the AI SDK demo needs installed, in the order it is looked for. */
const AI_SDK_PACKAGES = ["@keel/ai-sdk", "ai", "@ai-sdk/openai-compatible"] as const;

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
  const install = `npm install ${AI_SDK_PACKAGES.join(" ")}`;
  const load = async (name: string): Promise<Record<string, unknown>> => {
    try {
      return (await importPeer(name, cwd)) as Record<string, unknown>;
    } catch (error) {
      const first = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
      // `ai` is loaded by @keel/ai-sdk: its absence is named too, not taken for a broken install.
      const missing = AI_SDK_PACKAGES.find((candidate) => isMissingPackage(error, candidate));
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

/** Whether `error` is Node's "Cannot find package '<name>'" for `name` itself (not one of its own dependencies). */
function isMissingPackage(error: unknown, name: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  return error.message.includes(`'${name}'`) || error.message.includes(`"${name}"`);
}

/**
 * Imports the package `name` from beside this module (where Node finds the CLI's own packages),
 * else the ESM entry of the one installed in the project at `cwd` or a parent directory. When
 * neither has it, the first import's "Cannot find package" error is rethrown as it was.
 */
async function importPeer(name: string, cwd: string): Promise<unknown> {
  try {
    // A specifier in a variable: neither tsc nor a bundler tries to resolve the optional package.
    return await import(/* @vite-ignore */ name);
  } catch (error) {
    if (!isMissingPackage(error, name)) throw error;
    const entry = projectEntry(name, cwd);
    if (entry === undefined) throw error;
    return import(/* @vite-ignore */ pathToFileURL(entry).href);
  }
}

/** The ESM entry of package `name` in the nearest `node_modules` from `cwd` up, or undefined. */
function projectEntry(name: string, cwd: string): string | undefined {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const root = join(dir, "node_modules", name);
    if (existsSync(join(root, "package.json"))) {
      const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports?: unknown; module?: unknown; main?: unknown };
      const target = exportTarget(typeof manifest.exports === "object" && manifest.exports !== null && "." in manifest.exports ? (manifest.exports as Record<string, unknown>)["."] : manifest.exports);
      const file = target ?? (typeof manifest.module === "string" ? manifest.module : typeof manifest.main === "string" ? manifest.main : "index.js");
      return join(root, file);
    }
    if (dirname(dir) === dir) return undefined;
  }
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
