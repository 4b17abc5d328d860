import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { CliIo } from "@keel/cli";

/** The repository root (the workspace). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** An io that captures what a command writes. */
export interface CapturedIo extends CliIo {
  readonly out: string;
  readonly err: string;
}

/** A capturing {@link CliIo}: colour off unless asked, `cwd` and `env` as given. */
export function captureIo(options: { color?: boolean; cwd?: string; env?: Record<string, string | undefined> } = {}): CapturedIo {
  let out = "";
  let err = "";
  return {
    stdout: (text) => void (out += text),
    stderr: (text) => void (err += text),
    color: options.color ?? false,
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? { PATH: process.env["PATH"] },
    get out() {
      return out;
    },
    get err() {
      return err;
    },
  };
}

/** What the real `keel` binary did. */
export interface Spawned {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How {@link spawnKeel} runs the binary, beyond its arguments and environment. */
export interface SpawnOptions {
  /** Modules to `--import` after tsx (module hooks, e.g. `test/support/cli-break-packages.mjs`). */
  imports?: readonly string[];
  /** The working directory (default the repository root). */
  cwd?: string;
  /** Runs it on a pseudo-terminal (util-linux `script`), so stdout and stderr are a TTY; stdout then holds both. */
  terminal?: boolean;
  /** Text written to its standard input, which is then closed (default: no standard input). */
  stdin?: string;
}

/** The `keel` binary's source, run under tsx as `pnpm keel` does. */
export const KEEL_BIN = path.join(REPO_ROOT, "packages/cli/src/bin.ts");

/**
 * Runs the real `keel` binary (`packages/cli/src/bin.ts` under tsx, as `pnpm keel` does) as a
 * child process in the repository root, with `NO_COLOR=1` and `env` over this process's
 * environment (a variable set to `undefined` is removed), and collects its output.
 */
export function spawnKeel(args: readonly string[], env: Record<string, string | undefined> = {}, options: SpawnOptions = {}): Promise<Spawned> {
  const nodeArgs = ["--import", "tsx", ...(options.imports ?? []).flatMap((file) => ["--import", file]), "--conditions=@keel/source", KEEL_BIN, ...args];
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...process.env, NO_COLOR: "1", ...env })) if (value !== undefined) merged[name] = value;
  const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;
  const [file, argv] = options.terminal
    ? ["script", ["-qec", [process.execPath, ...nodeArgs].map(quote).join(" "), "/dev/null"]]
    : [process.execPath, nodeArgs];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { cwd: options.cwd ?? REPO_ROOT, env: merged, stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    if (options.stdin !== undefined) {
      child.stdin!.on("error", () => undefined);
      child.stdin!.end(options.stdin);
    }
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** True when the text holds a JavaScript stack trace line. */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+[:(]/m.test(text);
}

/** ANSI escape sequences. */
export const ANSI = /\u001b\[/;

/** A temporary directory, removed by the returned function. */
export function temporaryDirectory(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), `keel-cli-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
