import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { KeelError } from "@keel/core";
import { detectBackends, type DetectBackendsOptions } from "@keel/backends";
import { err, ok, type Result } from "neverthrow";
import { checkNodeVersion, checkStoreDirectory } from "./doctor-checks.js";
import type { DoctorReport } from "./doctor-report.js";
import { checkOptionalPeers } from "./optional-peers.js";

/** What `keel doctor` checks. */
export interface DoctorOptions {
  /** The running Node.js version (`process.versions.node`). */
  nodeVersion: string;
  /** The store directory (absolute). */
  dir: string;
  /** The environment: `PATH` to find the CLIs, API keys. */
  env: Readonly<Record<string, string | undefined>>;
  /** Per-CLI command overrides, passed to `detectBackends`. */
  commands?: DetectBackendsOptions["commands"];
  /** Where the optional peers are looked for: beside the CLI (default: this module's directory) and, for the demo's SDK backends, the project of `cwd` (default: none). */
  peers?: { cliDir?: string; cwd?: string };
}

/**
 * Runs every check of `keel doctor`. `ok` is false only when Node.js is too old or the store
 * directory cannot be written; backends and optional peers that are not installed are
 * information. Creates and writes nothing; the only processes started are the CLIs' `--version`.
 */
export async function runDoctor(options: DoctorOptions): Promise<Result<DoctorReport, KeelError>> {
  const node = checkNodeVersion(options.nodeVersion);
  const [store, detected] = await Promise.all([
    checkStoreDirectory(options.dir),
    // A plain copy: detectBackends validates `env` as a plain record, which process.env is not.
    detectBackends({ env: { ...options.env }, ...(options.commands ? { commands: options.commands } : {}) }),
  ]);
  if (detected.isErr()) return err(detected.error);
  const cliDir = options.peers?.cliDir ?? dirname(fileURLToPath(import.meta.url));
  const optionalPeers = checkOptionalPeers(cliDir, options.peers?.cwd ?? cliDir);
  return ok({ ok: node.ok && store.writable, node, store, backends: detected.value, optionalPeers });
}
