import { spawn, type ChildProcess } from "node:child_process";
import { stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { performance } from "node:perf_hooks";
import { KeelError, validate, type JsonValue, type KeelErrorCode } from "@keel/core";
import { err, errAsync, ok, ResultAsync, type Result } from "neverthrow";
import { z } from "zod";
import { stderrTail } from "@keel/backend";
import { createBoundedCapture } from "../internal/bounded-capture.js";
import { createLineSplitter } from "../internal/line-splitter.js";

/** Default longest stdout line: 64 MiB (OpenCode can print a whole file read as one line). */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Default stderr kept for errors: 64 KiB (head and tail). */
export const DEFAULT_MAX_STDERR_BYTES = 64 * 1024;
/** Default wait between SIGTERM and SIGKILL, and for stdio to close after the process exits. */
export const DEFAULT_KILL_GRACE_MS = 3000;

/** Options of {@link runProcess}. */
export interface RunProcessOptions {
  /** Executable name (looked up on `env.PATH`) or path. Never run through a shell. */
  command: string;
  /** Arguments, passed as an array: no shell quoting, no expansion. */
  args: readonly string[];
  /** Absolute working directory; must exist. */
  cwd: string;
  /** The complete environment of the process (merge `process.env` yourself if you want it). */
  env: Readonly<Record<string, string>>;
  /** Wall-clock limit; past it the process group gets SIGTERM, then SIGKILL after `killGraceMs`. */
  timeoutMs: number;
  /** Aborts the run the same way as the timeout. */
  signal?: AbortSignal;
  /**
   * Text written to the process's stdin, which is then closed (default: stdin is `/dev/null`).
   * For CLIs that take the prompt on stdin (OpenCode): no argument-length limit, no quoting.
   */
  stdin?: string;
  /** Called with each stdout line (without its newline), in order. Must not throw. */
  onLine: (line: string) => void;
  /** Longest stdout line accepted (default {@link DEFAULT_MAX_LINE_BYTES}); a longer one stops the run with `too_large`. */
  maxLineBytes?: number;
  /** How much stderr to keep (default {@link DEFAULT_MAX_STDERR_BYTES}). */
  maxStderrBytes?: number;
  /** Grace period before SIGKILL (default {@link DEFAULT_KILL_GRACE_MS}). */
  killGraceMs?: number;
}

/** How a process ended when it ended on its own. */
export interface ProcessExit {
  /** Exit code, or `null` when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended it, or `null`. */
  signal: string | null;
  /** Captured stderr (bounded: head and tail). */
  stderr: string;
  /** Whether stderr was cut to fit. */
  stderrTruncated: boolean;
  /** Wall-clock duration in milliseconds. */
  durationMs: number;
}

const RunProcessOptionsSchema = z.object({
  command: z.string().min(1).refine((command) => !command.includes("\0"), { message: "must not contain NUL" }),
  args: z.array(z.string().refine((arg) => !arg.includes("\0"), { message: "must not contain NUL" })),
  cwd: z.string().refine((cwd) => isAbsolute(cwd), { message: "must be an absolute path" }),
  env: z.record(z.string(), z.string()),
  timeoutMs: z.number().int().positive(),
  signal: z.custom<AbortSignal>((value) => value === undefined || value instanceof AbortSignal).optional(),
  stdin: z.string().optional(),
  onLine: z.custom<(line: string) => void>((value) => typeof value === "function", { message: "must be a function" }),
  maxLineBytes: z.number().int().positive().optional(),
  maxStderrBytes: z.number().int().min(1024).optional(),
  killGraceMs: z.number().int().nonnegative().optional(),
});

/**
 * The shared process runner of every CLI adapter. Spawns `command` with an argument array (never
 * a shell string) in its own process group, with `cwd` and `env` given and stdin closed (or fed
 * `stdin` and then closed); feeds
 * stdout to `onLine` line by line (LF framing, large line buffer); keeps a bounded stderr; on
 * timeout or abort kills the whole process group (SIGTERM, then SIGKILL after the grace period)
 * and waits for the process to be reaped, so no child is left behind. When the process exits on
 * its own, stray members of its group are killed too.
 *
 * Errors: `invalid_input` (bad options, missing `cwd`), `unavailable` (command not installed or
 * not executable), `timeout`, `aborted`, `too_large` (an over-long line), `corrupt` (`onLine`
 * threw), `io_failed` (any other spawn failure). A non-zero exit is not an error here: the caller
 * decides what it means.
 */
export function runProcess(options: RunProcessOptions): ResultAsync<ProcessExit, KeelError> {
  const valid = validate(RunProcessOptionsSchema, options, "process options");
  if (valid.isErr()) return errAsync(valid.error);
  if (options.signal?.aborted) {
    return errAsync(new KeelError("aborted", `${options.command} was not started: the run was aborted`, { details: { command: options.command } }));
  }
  return new ResultAsync(checkCwd(options.cwd).then((checked) => (checked.isErr() ? err(checked.error) : supervise(options))));
}

async function checkCwd(cwd: string): Promise<Result<void, KeelError>> {
  try {
    const info = await stat(cwd);
    if (info.isDirectory()) return ok(undefined);
  } catch {
    // Falls through to the same answer: there is no such directory.
  }
  return err(new KeelError("invalid_input", `working directory ${cwd} does not exist or is not a directory`, { details: { cwd } }));
}

function spawnFailure(command: string, cause: unknown): KeelError {
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === "ENOENT") {
    return new KeelError("unavailable", `command "${command}" was not found: install it or point the adapter's command option at it`, {
      details: { command, reason: "not_installed" },
      retryable: false,
      cause,
    });
  }
  if (code === "EACCES" || code === "EPERM" || code === "ENOEXEC") {
    return new KeelError("unavailable", `command "${command}" cannot be executed (${String(code)}): check its permissions`, {
      details: { command, reason: "not_executable" },
      retryable: false,
      cause,
    });
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return new KeelError("io_failed", `could not start "${command}": ${message}`, { details: { command }, cause });
}

interface Failure {
  code: KeelErrorCode;
  message: string;
  extra: Record<string, JsonValue>;
  cause?: unknown;
}

/** Spawns `command` as the leader of a new process group, stdin closed (or piped when given), stdout and stderr piped. */
function spawnInGroup(options: RunProcessOptions): ChildProcess | KeelError {
  try {
    return spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: { ...options.env },
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: true,
      shell: false,
      windowsHide: true,
    });
  } catch (cause) {
    return spawnFailure(options.command, cause);
  }
}

/** Signals the whole process group of `child` (falling back to `child` alone when there is no group). */
function groupKiller(child: ChildProcess): (signal: NodeJS.Signals) => void {
  return (signal) => {
    const pid = child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // No group left (ESRCH) or not ours to signal: fall back to the direct child.
      child.kill(signal);
    }
  };
}

function failureError(command: string, failure: Failure, exit: ProcessExit): KeelError {
  const details: Record<string, JsonValue> = { command, ...failure.extra, exitCode: exit.exitCode, signal: exit.signal };
  if (exit.stderr.trim() !== "") details.stderr = stderrTail(exit.stderr);
  return new KeelError(failure.code, failure.message, { details, ...(failure.cause === undefined ? {} : { cause: failure.cause }) });
}

function supervise(options: RunProcessOptions): Promise<Result<ProcessExit, KeelError>> {
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawnInGroup(options);
    if (child instanceof KeelError) return resolve(err(child));
    const killGroup = groupKiller(child);
    const stderr = createBoundedCapture(options.maxStderrBytes ?? DEFAULT_MAX_STDERR_BYTES);
    const timers: NodeJS.Timeout[] = [];
    let failure: Failure | undefined;
    let settled = false;

    const fail = (next: Failure): void => {
      if (failure || settled) return;
      failure = next;
      killGroup("SIGTERM");
      timers.push(setTimeout(() => killGroup("SIGKILL"), killGraceMs));
    };
    const onAbort = (): void =>
      fail({ code: "aborted", message: `${options.command} was aborted by the caller and its process group killed`, extra: {} });
    const finish = (result: Result<ProcessExit, KeelError>): void => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const onLine = (line: string): void => {
      if (failure) return;
      try {
        options.onLine(line);
      } catch (cause) {
        fail({ code: "corrupt", message: `the output of ${options.command} could not be handled: ${String(cause)}`, extra: {}, cause });
      }
    };
    const onOverflow = (bytes: number): void => {
      const message = `${options.command} printed a line of more than ${maxLineBytes} bytes (${bytes} so far)`;
      fail({ code: "too_large", message, extra: { maxLineBytes } });
    };
    const splitter = createLineSplitter(maxLineBytes, onLine, onOverflow);

    const timeoutMessage = `${options.command} ran past ${options.timeoutMs} ms and its process group was killed`;
    const onTimeout = (): void => fail({ code: "timeout", message: timeoutMessage, extra: { timeoutMs: options.timeoutMs } });
    timers.push(setTimeout(onTimeout, options.timeoutMs));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    // The signal may have fired while the cwd was being checked.
    if (options.signal?.aborted) onAbort();

    if (options.stdin !== undefined && child.stdin) {
      // A CLI that exits without reading its stdin makes the write fail with EPIPE: not an error here.
      child.stdin.on("error", () => undefined);
      child.stdin.end(options.stdin);
    }
    child.stdout?.on("data", (chunk: Buffer) => splitter.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", (cause) => {
      // Only a failed spawn is final here; later errors (a failed kill) are followed by "close".
      if (child.pid === undefined) finish(err(spawnFailure(options.command, cause)));
    });
    child.on("exit", () => {
      // A grandchild may still hold stdout open: after the grace period, kill the group and stop reading.
      const stopReading = () => {
        killGroup("SIGKILL");
        child.stdout?.destroy();
        child.stderr?.destroy();
      };
      timers.push(setTimeout(stopReading, killGraceMs));
    });
    child.on("close", (exitCode, signal) => {
      if (!failure) splitter.end();
      // Leave nothing behind: members of the group that outlived the leader are killed.
      killGroup("SIGKILL");
      const durationMs = Math.round(performance.now() - started);
      const exit: ProcessExit = { exitCode, signal, stderr: stderr.text(), stderrTruncated: stderr.truncated, durationMs };
      finish(failure ? err(failureError(options.command, failure, exit)) : ok(exit));
    });
  });
}
