import { KeelError } from "@keel/core";
import type { ClaudeAgentSdkModule, ClaudeAgentSdkQuery } from "./claude-agent-sdk-types.js";

/** The npm name of the Claude Agent SDK (a peer the host installs, never a dependency of Keel). */
export const CLAUDE_AGENT_SDK_PACKAGE = "@anthropic-ai/claude-agent-sdk";

// A specifier in a variable: neither tsc nor a bundler tries to resolve the optional peer.
const importSdk = (): Promise<unknown> => import(/* @vite-ignore */ CLAUDE_AGENT_SDK_PACKAGE);

/**
 * Whether `error` is Node's "Cannot find package '<name>'" for the SDK itself, not for a module
 * inside it or one of its dependencies (that is a broken install, not a missing peer).
 */
function isMissingSdk(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  return error.message.includes(`'${CLAUDE_AGENT_SDK_PACKAGE}'`) || error.message.includes(`"${CLAUDE_AGENT_SDK_PACKAGE}"`);
}

/**
 * Loads the SDK's `query` with a dynamic import (once per backend). A missing package is
 * `unavailable`, not retryable, naming the install line; a package that loads but has no `query`
 * function, or fails to load, is `unavailable` too, with the loader's first line.
 */
export async function loadClaudeAgentSdkQuery(importer: () => Promise<unknown> = importSdk): Promise<ClaudeAgentSdkQuery> {
  const install = `npm install ${CLAUDE_AGENT_SDK_PACKAGE}`;
  let module: unknown;
  try {
    module = await importer();
  } catch (error) {
    if (isMissingSdk(error)) {
      throw new KeelError("unavailable", `the claude-agent-sdk backend needs ${CLAUDE_AGENT_SDK_PACKAGE}, which is not installed: ${install} (or pass its query as the \`query\` option)`, {
        retryable: false,
        details: { backend: "claude-agent-sdk", package: CLAUDE_AGENT_SDK_PACKAGE, install },
      });
    }
    const first = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
    throw new KeelError("unavailable", `${CLAUDE_AGENT_SDK_PACKAGE} is installed but cannot be loaded (${first}): reinstall it (${install})`, {
      retryable: false,
      details: { backend: "claude-agent-sdk", package: CLAUDE_AGENT_SDK_PACKAGE, install },
      cause: error,
    });
  }
  const query = (module as Partial<ClaudeAgentSdkModule> | null)?.query;
  if (typeof query !== "function") {
    throw new KeelError("unavailable", `${CLAUDE_AGENT_SDK_PACKAGE} exports no query function: install a version this adapter supports (${install})`, {
      retryable: false,
      details: { backend: "claude-agent-sdk", package: CLAUDE_AGENT_SDK_PACKAGE, install },
    });
  }
  return query;
}
