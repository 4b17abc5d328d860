import {
  backendError,
  safeTurnListener,
  validateBackendTurnRequest,
  withBackendContext,
  type Backend,
  type BackendCapabilities,
  type BackendTurnListener,
  type BackendTurnRequest,
  type BackendTurnResult,
} from "@keel/backend";
import { KeelError, utf8Bytes, validateOrThrow, type JsonObject } from "@keel/core";
import { errAsync, okAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { withPlainEnv } from "./plain-env.js";
import { runProcess } from "./process-runner.js";
import type { StreamParser } from "./stream-parser.js";
import { createFindingsObserver } from "./stream-progress.js";
import { decideTurnOutcome, type ParsedTurn, type TurnOutcomeRules } from "./turn-outcome.js";

/**
 * Largest prompt passed as one argument: Linux limits a single argv string to 128 KiB
 * (`MAX_ARG_STRLEN`, including its terminating NUL).
 */
export const DEFAULT_MAX_PROMPT_BYTES = 128 * 1024 - 1;

/** Options every CLI adapter accepts. */
export interface CliBackendOptions {
  /** Executable to run: a name looked up on `PATH` or a path. Defaults to the CLI's usual name. */
  command?: string;
  /**
   * Arguments placed before the adapter's own, e.g. a script when `command` is `node`
   * (`{ command: process.execPath, commandArgs: ["/path/fake-cli.mjs"] }`).
   */
  commandArgs?: readonly string[];
  /** Extra flags, placed among the adapter's flags (before any subcommand or prompt). */
  extraArgs?: readonly string[];
  /** Default model when a request names none (otherwise the CLI's own default). */
  model?: string;
  /** Environment added to every turn (on top of `process.env` unless `inheritEnv` is false). */
  env?: Readonly<Record<string, string>>;
  /** Whether the process inherits `process.env` (default true: CLIs need `PATH`, `HOME` and their auth). */
  inheritEnv?: boolean;
  /** Grace period between SIGTERM and SIGKILL (default 3000 ms). */
  killGraceMs?: number;
  /** Longest stdout line accepted (default 64 MiB). */
  maxLineBytes?: number;
  /** stderr kept for error messages (default 64 KiB). */
  maxStderrBytes?: number;
  /** Largest prompt accepted (default {@link DEFAULT_MAX_PROMPT_BYTES}); a larger one is `too_large`. */
  maxPromptBytes?: number;
}

const flag = z.string().refine((value) => !value.includes("\0"), { message: "must not contain NUL" });

/** zod schema of {@link CliBackendOptions}; adapters extend it with their own options. */
export const CliBackendOptionsSchema = z.strictObject({
  command: flag.min(1).optional(),
  commandArgs: z.array(flag).optional(),
  extraArgs: z.array(flag).optional(),
  model: z.string().min(1).max(256).optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), flag).optional(),
  inheritEnv: z.boolean().optional(),
  killGraceMs: z.number().int().nonnegative().max(60_000).optional(),
  maxLineBytes: z.number().int().min(1024).optional(),
  maxStderrBytes: z.number().int().min(1024).optional(),
  maxPromptBytes: z.number().int().positive().max(DEFAULT_MAX_PROMPT_BYTES).optional(),
});

/** What an adapter knows when it builds one turn's command line. */
export interface CliInvocationContext {
  /** The validated request. */
  request: BackendTurnRequest;
  /** The model to pass: the request's, else the adapter option's, else none. */
  model: string | undefined;
  /** The thread to resume, or `null` for a fresh turn. */
  resumeThreadId: string | null;
  /** The id the adapter assigned to a fresh thread (see {@link CliAdapter.assignThreadId}), or `null`. */
  assignedThreadId: string | null;
  /** The environment the process will get before the adapter's own additions. */
  env: Readonly<Record<string, string>>;
}

/** One turn's command line, built by an adapter. */
export interface CliInvocation {
  /** Arguments after {@link CliBackendOptions.commandArgs}. */
  args: string[];
  /** Environment the adapter adds (wins over everything else). */
  env?: Record<string, string>;
  /** Text for the process's stdin (e.g. the prompt, for CLIs that mangle it as an argument); stdin is closed otherwise. */
  stdin?: string;
  /** Called once the process has ended, e.g. to remove a staging directory. */
  cleanup?: () => Promise<void>;
}

/**
 * One coding-agent CLI, described for {@link createCliBackend}: how to build its command line,
 * how to read its output and how it says a thread is gone. Everything else — validation, the
 * process, the timeout, abort, the error classes — is shared.
 */
export interface CliAdapter {
  /** Backend id. */
  id: string;
  /** Capabilities. */
  capabilities: BackendCapabilities;
  /** The CLI's usual executable name. */
  defaultCommand: string;
  /**
   * For CLIs that accept a host-chosen id for a new session (Copilot `--session-id`, Grok Build
   * `-s`): returns a new id, so the thread id is known before the first byte of output.
   */
  assignThreadId?: () => string;
  /** Builds the arguments (and environment) of one turn. */
  buildInvocation(context: CliInvocationContext): ResultAsync<CliInvocation, KeelError>;
  /**
   * Whether the prompt goes to the CLI on stdin ({@link CliInvocation.stdin}) rather than as an
   * argument: the argument-length limit ({@link CliBackendOptions.maxPromptBytes}) then does not apply.
   */
  promptOnStdin?: boolean;
  /** A parser for one run's stdout. */
  createParser(context: CliParserContext): StreamParser;
  /**
   * What a turn in which the parser saw no tool call reports as `toolCalls`: `zero` (default)
   * when the CLI's stream is known to show every tool call, `unknown` (`null`) when it is not
   * (no tool event was ever recorded for the CLI), so an unseen count is never a 0.
   */
  unseenToolCalls?: "zero" | "unknown";
  /** How this CLI reports a gone thread and what a successful run must show. */
  outcome: Omit<TurnOutcomeRules, "backend" | "resumeThreadId">;
  /**
   * Completes a successful turn from what the CLI left outside its stdout (e.g. Copilot's token
   * counts in its session-state `events.jsonl`). Called once, after the outcome was decided; an
   * error here fails the turn, so read leniently and leave unknown buckets `null`.
   */
  completeTurn?(turn: ParsedTurn, context: CliInvocationContext): ResultAsync<ParsedTurn, KeelError>;
}

/** What a parser knows about the turn it reads. */
export interface CliParserContext {
  /** The thread being resumed, or `null` for a fresh turn. */
  resumeThreadId: string | null;
  /** The id assigned to a fresh thread (see {@link CliAdapter.assignThreadId}), or `null`. */
  assignedThreadId: string | null;
  /** The request's {@link BackendTurnRequest.resumeState} when resuming, else `null`. */
  resumeState: JsonObject | null;
}

function processEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return env;
}

/**
 * A prompt passed as an argument must not look like a flag (`-…`) or, for pi, a file
 * reference (`@…`): a leading space keeps every argument parser from reading it as one.
 */
export function promptArgument(prompt: string): string {
  return prompt.startsWith("-") || prompt.startsWith("@") ? ` ${prompt}` : prompt;
}

/**
 * Builds a {@link Backend} from a {@link CliAdapter}: validates the request (`invalid_input`),
 * refuses a thread on a fresh-only adapter (`unsupported`) and an over-long prompt
 * (`too_large`), runs the CLI through {@link runProcess} and classifies the result with
 * {@link decideTurnOutcome}. With an `onEvent` listener, each stdout line's new tool calls, file
 * accesses and answer text are reported as they arrive ({@link createFindingsObserver}). Errors carry `details.backend` and the thread id seen so far.
 * Throws `invalid_input` at once for bad options.
 */
export function createCliBackend(adapter: CliAdapter, options: CliBackendOptions = {}): Backend {
  const settings = validateOrThrow(CliBackendOptionsSchema, withPlainEnv(options), `${adapter.id} backend options`);
  const command = settings.command ?? adapter.defaultCommand;
  const maxPromptBytes = settings.maxPromptBytes ?? DEFAULT_MAX_PROMPT_BYTES;

  const runTurn = (input: BackendTurnRequest, signal?: AbortSignal, onEvent?: BackendTurnListener): ResultAsync<BackendTurnResult, KeelError> => {
    const valid = validateBackendTurnRequest(input);
    if (valid.isErr()) return errAsync(withBackendContext(valid.error, adapter.id, null));
    const request = valid.value;
    const resumeThreadId = request.threadId ?? null;
    if (resumeThreadId !== null && !adapter.capabilities.resume) {
      return errAsync(
        backendError("unsupported", adapter.id, `${adapter.id} cannot resume threads: start a fresh turn (omit threadId)`, {
          threadId: resumeThreadId,
        }),
      );
    }
    if (signal?.aborted) return errAsync(backendError("aborted", adapter.id, `${adapter.id} turn was aborted before it started`));
    const promptBytes = utf8Bytes(request.prompt);
    if (!adapter.promptOnStdin && promptBytes > maxPromptBytes) {
      return errAsync(
        backendError("too_large", adapter.id, `prompt of ${promptBytes} bytes exceeds the ${maxPromptBytes}-byte argument limit of ${adapter.id}`, {
          extra: { promptBytes, maxPromptBytes },
        }),
      );
    }
    const assignedThreadId = resumeThreadId === null && adapter.assignThreadId ? adapter.assignThreadId() : null;
    const env = {
      ...(settings.inheritEnv === false ? {} : processEnvironment()),
      ...settings.env,
      ...request.env,
    };
    const context: CliInvocationContext = { request, model: request.model ?? settings.model, resumeThreadId, assignedThreadId, env };
    return adapter.buildInvocation(context).andThen((invocation) => {
      const resumeState = resumeThreadId === null ? null : (request.resumeState ?? null);
      const parser = adapter.createParser({ resumeThreadId, assignedThreadId, resumeState });
      const observe = onEvent ? createFindingsObserver(() => parser.findings(), safeTurnListener(onEvent)) : undefined;
      const run = runProcess({
        command,
        args: [...(settings.commandArgs ?? []), ...invocation.args],
        cwd: request.cwd,
        env: { ...env, ...invocation.env },
        ...(invocation.stdin === undefined ? {} : { stdin: invocation.stdin }),
        timeoutMs: request.timeoutMs,
        ...(signal ? { signal } : {}),
        onLine: (line) => {
          parser.push(line);
          observe?.();
        },
        ...(settings.maxLineBytes === undefined ? {} : { maxLineBytes: settings.maxLineBytes }),
        ...(settings.maxStderrBytes === undefined ? {} : { maxStderrBytes: settings.maxStderrBytes }),
        ...(settings.killGraceMs === undefined ? {} : { killGraceMs: settings.killGraceMs }),
      })
        .mapErr((error) => withBackendContext(error, adapter.id, parser.threadId ?? assignedThreadId ?? resumeThreadId))
        .andThen((exit) => {
          const decided = decideTurnOutcome(parser.findings(), exit, { ...adapter.outcome, backend: adapter.id, resumeThreadId });
          const complete = adapter.completeTurn;
          const completed = decided.asyncAndThen((parsed) => (complete ? complete(parsed, context) : okAsync(parsed)));
          return completed.map(
            (parsed): BackendTurnResult => ({
              ...parsed,
              toolCalls: parsed.toolCalls === 0 && adapter.unseenToolCalls === "unknown" ? null : parsed.toolCalls,
              durationMs: exit.durationMs,
              exitCode: exit.exitCode,
            }),
          );
        });
      const cleanup = invocation.cleanup;
      if (!cleanup) return run;
      return new ResultAsync(
        (async () => {
          const result = await run;
          await cleanup().catch(() => undefined);
          return result;
        })(),
      );
    });
  };

  return Object.freeze({ id: adapter.id, capabilities: Object.freeze({ ...adapter.capabilities }), runTurn });
}

/** Shorthand for adapters whose invocation needs no I/O. */
export function invocation(args: string[], env?: Record<string, string>): ResultAsync<CliInvocation, KeelError> {
  return okAsync(env === undefined ? { args } : { args, env });
}
