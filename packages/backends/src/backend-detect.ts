import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import { validate, type KeelError } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { withPlainEnv } from "./backend-port.js";
import { runProcess } from "./process-runner.js";

/** Ids of the CLI adapters, with the command each runs by default and whether it resumes. */
export const CLI_BACKENDS = [
  { id: "claude-code", command: "claude", resumable: true },
  { id: "codex", command: "codex", resumable: true },
  { id: "pi", command: "pi", resumable: true },
  { id: "opencode", command: "opencode", resumable: true },
  { id: "copilot", command: "copilot", resumable: true },
  { id: "cursor", command: "cursor-agent", resumable: true },
  { id: "gemini", command: "gemini", resumable: true },
  { id: "grok", command: "grok", resumable: true },
  { id: "qoder", command: "qodercli", resumable: true },
] as const;

/** Id of a CLI adapter. */
export type CliBackendId = (typeof CLI_BACKENDS)[number]["id"];

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
  /** Whether the backend resumes threads. */
  resumable: boolean;
  /** Why it is not available, or `null`. */
  problem: string | null;
}

/** Options of {@link detectBackends}. */
export interface DetectBackendsOptions {
  /** Environment to search (`PATH`, API keys) and to run `--version` with (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Commands to use instead of the defaults, per CLI id (a name on `PATH` or a path). */
  commands?: Partial<Record<CliBackendId, string>>;
  /** Time allowed for each `--version` (default 10,000 ms). */
  timeoutMs?: number;
}

const OptionsSchema = z.strictObject({
  env: z.record(z.string(), z.string().optional()).optional(),
  commands: z
    .partialRecord(z.enum(CLI_BACKENDS.map((backend) => backend.id) as [CliBackendId, ...CliBackendId[]]), z.string().min(1))
    .optional(),
  timeoutMs: z.number().int().positive().max(120_000).optional(),
});

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

/** Resolves a command like a shell would: a path as is, a bare name through `PATH`. */
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

async function detectCli(
  entry: (typeof CLI_BACKENDS)[number],
  command: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<BackendDetection> {
  const base = { id: entry.id, kind: "cli" as const, command, resumable: entry.resumable };
  const path = await findCommand(command, env);
  if (path === null) {
    return { ...base, path: null, available: false, version: null, problem: `${command} is not installed (not found on PATH)` };
  }
  const lines: string[] = [];
  const onLine = (line: string) => lines.push(line);
  const ran = await runProcess({ command: path, args: ["--version"], cwd: tmpdir(), env, timeoutMs, onLine, killGraceMs: 500 });
  if (ran.isErr()) return { ...base, path, available: false, version: null, problem: `${command} --version failed: ${ran.error.message}` };
  const firstLine = (text: string) => text.split("\n").map((line) => line.trim()).find((line) => line !== "");
  const version = (firstLine(lines.join("\n")) ?? firstLine(ran.value.stderr) ?? null)?.slice(0, 200) ?? null;
  if (ran.value.exitCode !== 0) {
    const problem = `${command} --version exited with code ${ran.value.exitCode ?? ran.value.signal}`;
    return { ...base, path, available: false, version, problem };
  }
  return { ...base, path, available: true, version, problem: null };
}

/**
 * Which backends can run here, for `keel doctor`: for every CLI adapter, whether its command is
 * on `PATH` (or at the configured path) and what `--version` prints; for DeepSeek, whether
 * `DEEPSEEK_API_KEY` is set. Commands run with stdin closed and a timeout; nothing is installed
 * or changed. Per-backend problems are reported in `problem`, never as an error.
 *
 * @returns one entry per backend, CLI adapters first, or `invalid_input` for bad options.
 */
export function detectBackends(options: DetectBackendsOptions = {}): ResultAsync<BackendDetection[], KeelError> {
  const valid = validate(OptionsSchema, withPlainEnv(options), "detectBackends options");
  if (valid.isErr()) return errAsync(valid.error);
  const source = options.env ?? process.env;
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) if (value !== undefined) env[key] = value;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const detections = Promise.all(
    CLI_BACKENDS.map((entry) => detectCli(entry, options.commands?.[entry.id] ?? entry.command, env, timeoutMs)),
  ).then((clis): BackendDetection[] => {
    const keySet = (env.DEEPSEEK_API_KEY ?? "") !== "";
    return [
      ...clis,
      {
        id: "deepseek",
        kind: "http",
        command: null,
        path: null,
        available: keySet,
        version: null,
        resumable: false,
        problem: keySet ? null : "DEEPSEEK_API_KEY is not set",
      },
    ];
  });
  return ResultAsync.fromSafePromise(detections);
}
