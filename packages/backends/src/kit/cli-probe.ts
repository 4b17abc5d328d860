import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import type { Backend, BackendCapabilities } from "@keel/backend";
import { runProcess } from "./process-runner.js";

/**
 * The CLI versions an adapter was proven against: from `provenWith` (the version the adapter's
 * tests ran against) up to, not including, `below` (the next minor release, whose changes have
 * not been seen). `null` bounds mean "not proven".
 */
export interface CliVersionRange {
  /** Lowest proven version, e.g. `0.73.1`. */
  provenWith: string;
  /** First version outside the range, e.g. `0.74.0`. */
  below: string;
}

/**
 * What an adapter folder says about itself, for `keel doctor` and `detectBackends`: exported
 * as `adapterInfo` from every adapter subpath of `@keel/backends` (and from third-party
 * adapters that want to be detected).
 */
export interface CliAdapterInfo {
  /** Backend id (as the adapter's `Backend.id`). */
  id: string;
  /** `cli`: a command to run; `http`: an API called directly. */
  kind: "cli" | "http";
  /** The executable the adapter runs by default, or `null` for an API. */
  command: string | null;
  /** The adapter's capabilities (as its backends declare them). */
  capabilities: BackendCapabilities;
  /**
   * What the adapter is proven against: `real-cli` (its tests ran the real CLI offline against
   * a local fake provider) or `recordings` (only against recorded output streams).
   */
  provenAgainst: "real-cli" | "recordings";
  /** The CLI versions it was proven with, or `null` when none was (recordings only). */
  versions: CliVersionRange | null;
  /** For `http` adapters: the environment variable that must hold the API key. */
  apiKeyEnv?: string;
  /** Reads the version from the CLI's `--version` output (default: the first `x.y.z` in it). */
  parseVersion?(output: string): string | null;
}

/**
 * An adapter's {@link CliAdapterInfo} that can also create its backend: what every adapter
 * folder of `@keel/backends` exports as `adapterInfo`, and what `loadBuiltInAdapter(id)` answers,
 * so a host picks an adapter by id without a table of its own.
 *
 * @example
 * ```ts
 * export const adapterInfo: BackendAdapterInfo<MyCliBackendOptions> = {
 *   id: "my-cli", kind: "cli", command: "my-cli", capabilities, provenAgainst: "recordings", versions: null,
 *   create: (options) => createMyCliBackend(options),
 * };
 * ```
 */
export interface BackendAdapterInfo<Options extends object = Record<string, unknown>> extends CliAdapterInfo {
  /**
   * Creates the adapter's backend (its `create…Backend`); throws a `KeelError` `invalid_input`
   * for options it does not accept, as that function does.
   */
  create(options?: Options): Backend;
}

/** The first `x.y.z` in a `--version` output (`codex-cli 0.171.0`, `2.1.197 (Claude Code)`), or `null`. */
export function parseCliVersion(output: string): string | null {
  return /\b(\d+)\.(\d+)\.(\d+)\b/.exec(output)?.[0] ?? null;
}

function numbers(version: string): [number, number, number] | null {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : null;
}

/** Compares two `x.y.z` versions: negative, 0 or positive; `null` when either is not one. */
export function compareCliVersions(a: string, b: string): number | null {
  const left = numbers(a);
  const right = numbers(b);
  if (!left || !right) return null;
  for (let index = 0; index < 3; index += 1) if (left[index] !== right[index]) return left[index]! - right[index]!;
  return 0;
}

/** Where a version stands against a range: `proven`, `older`, `newer`, or `unknown` (no range or no version). */
export function versionStanding(version: string | null, range: CliVersionRange | null): "proven" | "older" | "newer" | "unknown" {
  if (version === null || range === null) return "unknown";
  const low = compareCliVersions(version, range.provenWith);
  const high = compareCliVersions(version, range.below);
  if (low === null || high === null) return "unknown";
  if (low < 0) return "older";
  if (high >= 0) return "newer";
  return "proven";
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Resolves a command like a shell would: a path as is, a bare name through `PATH`; `null` when not found. */
export async function findCommand(command: string, env: Readonly<Record<string, string | undefined>>): Promise<string | null> {
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : join(process.cwd(), command);
    return (await isExecutableFile(path)) ? path : null;
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** What {@link probeCliVersion} saw. */
export interface CliVersionProbe {
  /** First line of the output (bounded), or `null`. */
  output: string | null;
  /** Whether `--version` exited 0. */
  ok: boolean;
  /** Why not, or `null`. */
  problem: string | null;
}

/** Runs `<path> --version` with stdin closed and a timeout, and returns its first line. Never fails. */
export async function probeCliVersion(path: string, env: Readonly<Record<string, string>>, timeoutMs: number): Promise<CliVersionProbe> {
  const lines: string[] = [];
  const ran = await runProcess({ command: path, args: ["--version"], cwd: tmpdir(), env, timeoutMs, onLine: (line) => lines.push(line), killGraceMs: 500 });
  if (ran.isErr()) return { output: null, ok: false, problem: `--version failed: ${ran.error.message}` };
  const firstLine = (text: string) => text.split("\n").map((line) => line.trim()).find((line) => line !== "");
  const output = (firstLine(lines.join("\n")) ?? firstLine(ran.value.stderr) ?? null)?.slice(0, 200) ?? null;
  if (ran.value.exitCode !== 0) return { output, ok: false, problem: `--version exited with code ${ran.value.exitCode ?? ran.value.signal}` };
  return { output, ok: true, problem: null };
}
