// Per-CLI isolation for the real-CLI tests: each CLI runs with its own HOME, config directory,
// XDG directories and TMPDIR, telemetry and updates off, stdin closed (the process runner gives
// it /dev/null), only a minimal inherited environment, and every outside connection routed to
// the fake provider's refusing proxy. When the suite runs inside a network namespace (see
// scripts/run-clis.mjs) loopback is the only interface besides.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createFakeProviderSandbox, type FakeProvider } from "@keel/testkit/provider";

/** The six CLIs proven here, by Keel backend id. */
export type RealCliId = "pi" | "codex" | "claude-code" | "opencode" | "gemini" | "copilot";

/** The exact versions pinned in package.json (the ones of shared/research/real-clis.md). */
export const REAL_CLI_VERSIONS: Readonly<Record<RealCliId, string>> = {
  pi: "0.73.1",
  codex: "0.171.0",
  "claude-code": "2.1.197",
  opencode: "1.18.33",
  gemini: "0.61.0",
  copilot: "1.0.102",
};

const BINARIES: Readonly<Record<RealCliId, string>> = {
  pi: "pi",
  codex: "codex",
  "claude-code": "claude",
  opencode: "opencode",
  gemini: "gemini",
  copilot: "copilot",
};

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Absolute path of the installed CLI binary (may not exist: see {@link cliInstalled}). */
export function cliBinary(cli: RealCliId): string {
  return join(PACKAGE_DIR, "node_modules", ".bin", BINARIES[cli]);
}

/** Whether the CLI is installed in this package's node_modules. */
export function cliInstalled(cli: RealCliId): boolean {
  return existsSync(cliBinary(cli));
}

/** Whether this run is inside a network namespace with only loopback (set by scripts/run-clis.mjs). */
export function inNetworkNamespace(): boolean {
  return process.env.KEEL_REAL_CLIS_NETNS === "1";
}

/** One CLI's private directories and environment. */
export interface CliSandbox {
  /** The root of every directory below (removed by `cleanup`). */
  root: string;
  /** `HOME`. */
  home: string;
  /** The CLI's own config directory (`CODEX_HOME`, `PI_CODING_AGENT_DIR`, `COPILOT_HOME` …). */
  config: string;
  /** `TMPDIR`. */
  tmp: string;
  /** The project the agent works in (a README and a notes file). */
  cwd: string;
  /** The complete environment of the CLI (the adapter runs with `inheritEnv: false`). */
  env: Record<string, string>;
  /** Removes every directory. */
  cleanup(): Promise<void>;
}

/** Contents of the demo project each turn runs in; tool-call tests read these back. */
export const PROJECT_FILES: Readonly<Record<string, string>> = {
  "README.md": "# Harbor\n\nHarbor keeps ships in port. The secret word is lighthouse-42.\n",
  "notes.txt": "first note\nsecond note\n",
};

/**
 * Makes the directories and the base environment of one CLI run against `provider`. The
 * environment holds no credential of the machine: PATH is node's directory and the system's,
 * proxies point at the provider, and telemetry, update checks and colour are off.
 */
export async function createCliSandbox(cli: RealCliId, provider: FakeProvider): Promise<CliSandbox> {
  const root = await mkdtemp(join(tmpdir(), `keel-real-${cli}-`));
  const sandbox = await createFakeProviderSandbox(root, [dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":"));
  const cwd = join(root, "project");
  await mkdir(cwd, { recursive: true });
  for (const [name, text] of Object.entries(PROJECT_FILES)) await writeFile(join(cwd, name), text);
  const { home, config, tmp } = sandbox;
  return { root, home, config, tmp, cwd, env: sandbox.envWith(provider), cleanup: () => rm(root, { recursive: true, force: true }) };
}
