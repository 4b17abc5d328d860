import { KeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { listBuiltInAdapters } from "./backend-adapters.js";
import type { CliAdapterInfo, CliVersionRange } from "./kit/cli-probe.js";
import { withPlainEnv } from "./kit/plain-env.js";

/** What {@link detectBackends} found about one backend. */
export interface BackendDetection {
  /** Backend id. */
  id: string;
  /** `cli` (a command to run) or `http` (an API; DeepSeek). */
  kind: "cli" | "http";
  /** The command looked for, or `null` for an API. */
  command: string | null;
  /** Where the command was found, or `null`. */
  path: string | null;
  /** Usable: the command is installed and answered `--version` (CLI), or the API key is set (API). */
  available: boolean;
  /** First line of the `--version` output, or `null`. */
  version: string | null;
  /** The `x.y.z` read from {@link BackendDetection.version}, or `null`. */
  versionNumber: string | null;
  /** Whether the backend resumes threads. */
  resumable: boolean;
  /** What the adapter is proven against: the real CLI, or recorded streams only. */
  provenAgainst: CliAdapterInfo["provenAgainst"];
  /** The CLI versions the adapter was proven with, or `null`. */
  provenVersions: CliVersionRange | null;
  /**
   * Where the installed version stands: `proven` (inside the range), `older` or `newer` than it,
   * or `unknown` (not installed, no version printed, or no range).
   */
  versionStanding: "proven" | "older" | "newer" | "unknown";
  /** Why it is not available, or `null`. */
  problem: string | null;
}

/** Options of {@link detectBackends}. */
export interface DetectBackendsOptions {
  /** Environment to search (`PATH`, API keys) and to run `--version` with (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Commands to use instead of the defaults, per backend id (a name on `PATH` or a path). */
  commands?: Readonly<Record<string, string>>;
  /** Time allowed for each `--version` (default 20,000 ms: a large JS CLI can take seconds to start on a loaded machine). */
  timeoutMs?: number;
  /** Adapters to detect besides (or instead of, with `builtIn: false`) the built-in ones, e.g. third-party adapters. */
  adapters?: readonly CliAdapterInfo[];
  /** Whether to detect the adapters of this package (default true). */
  builtIn?: boolean;
}

const OptionsSchema = z.strictObject({
  env: z.record(z.string(), z.string().optional()).optional(),
  commands: z.record(z.string(), z.string().min(1)).optional(),
  timeoutMs: z.number().int().positive().max(120_000).optional(),
  adapters: z.array(z.looseObject({ id: z.string().min(1), kind: z.enum(["cli", "http"]) })).optional(),
  builtIn: z.boolean().optional(),
});

async function detectOne(info: CliAdapterInfo, command: string | null, env: Record<string, string>, timeoutMs: number): Promise<BackendDetection> {
  // The probe (and the process runner under it) loads on the first detection, not with the package.
  const { findCommand, parseCliVersion, probeCliVersion, versionStanding } = await import("./kit/cli-probe.js");
  const base = {
    id: info.id,
    kind: info.kind,
    command,
    resumable: info.capabilities.resume,
    provenAgainst: info.provenAgainst,
    provenVersions: info.versions,
  };
  if (info.kind === "http" || command === null) {
    const key = info.apiKeyEnv;
    const keySet = key !== undefined && (env[key] ?? "") !== "";
    const problem = keySet ? null : key ? `${key} is not set` : "no command and no API key variable";
    return { ...base, path: null, available: keySet, version: null, versionNumber: null, versionStanding: "unknown", problem };
  }
  const path = await findCommand(command, env);
  if (path === null) {
    const problem = `${command} is not installed (not found on PATH)`;
    return { ...base, path: null, available: false, version: null, versionNumber: null, versionStanding: "unknown", problem };
  }
  const probe = await probeCliVersion(path, env, timeoutMs);
  const versionNumber = probe.output === null ? null : (info.parseVersion ?? parseCliVersion)(probe.output);
  const standing = versionStanding(versionNumber, info.versions);
  const problem = probe.problem === null ? null : `${command} ${probe.problem}`;
  return { ...base, path, available: probe.ok, version: probe.output, versionNumber, versionStanding: standing, problem };
}

/**
 * Which backends can run here, for `keel doctor`: for every adapter (the built-in ones from
 * {@link listBuiltInAdapters}, then `options.adapters`), whether its command is on `PATH` (or
 * at the configured path), what `--version` prints, and whether that version is inside the range
 * the adapter was proven with; for an API adapter, whether its key variable is set. Commands run
 * with stdin closed and a timeout; nothing is installed or changed. Per-backend problems are
 * reported in `problem`, never as an error.
 *
 * @returns one entry per adapter, CLI adapters first, or `invalid_input` for bad options.
 */
export function detectBackends(options: DetectBackendsOptions = {}): ResultAsync<BackendDetection[], KeelError> {
  const valid = validate(OptionsSchema, withPlainEnv(options), "detectBackends options");
  if (valid.isErr()) return errAsync(valid.error);
  const source = options.env ?? process.env;
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) if (value !== undefined) env[key] = value;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const detections = (async () => {
    const adapters = [...(options.builtIn === false ? [] : await listBuiltInAdapters()), ...(options.adapters ?? [])];
    const unknown = Object.keys(options.commands ?? {}).filter((id) => !adapters.some((info) => info.id === id));
    if (unknown.length > 0) {
      throw new KeelError("invalid_input", `commands name no known adapter: ${unknown.join(", ")}; known: ${adapters.map((info) => info.id).join(", ")}`, {
        details: { unknown },
      });
    }
    const ordered = [...adapters.filter((info) => info.kind === "cli"), ...adapters.filter((info) => info.kind !== "cli")];
    return Promise.all(ordered.map((info) => detectOne(info, options.commands?.[info.id] ?? info.command, env, timeoutMs)));
  })();
  return ResultAsync.fromPromise(detections, (cause) =>
    KeelError.is(cause) ? cause : new KeelError("io_failed", `backend detection failed: ${String(cause)}`, { cause }),
  );
}
