import { isAbsolute } from "node:path";
import { validate, type KeelError, type Usage } from "@keel/core";
import type { Result, ResultAsync } from "neverthrow";
import { z } from "zod";

/**
 * How a backend receives a role's skills (DESIGN.md §5):
 *
 * - `native` — the adapter hands {@link TurnRequest.skillPaths} to the CLI on every turn (a flag
 *   such as pi's `--skill`, or a per-run configuration); nothing in `cwd` is touched.
 * - `staged` — the CLI only discovers skills in directories it scans; the host stages them first
 *   (`stageSkills(view, join(cwd, ".agents/skills"))` from `@keel/skills`) and the adapter ignores
 *   `skillPaths`.
 * - `prompt` — the CLI has no loader Keel can drive; the host puts the skill contract (names,
 *   descriptions, paths) into the prompt and the adapter ignores `skillPaths`.
 */
export type BackendSkillDelivery = "native" | "staged" | "prompt";

/**
 * How much token usage a backend reports:
 * `full` (input with cache split, output, usually cost), `partial` (some buckets, e.g. Copilot's
 * output tokens only) or `none` (every bucket `null`).
 */
export type BackendUsageSupport = "full" | "partial" | "none";

/** What a backend can do. Hosts and the session planner read these before a turn. */
export interface BackendCapabilities {
  /**
   * Whether a provider thread can be resumed with {@link TurnRequest.threadId}. A fresh-only
   * backend answers a request that names a thread with `unsupported`.
   */
  resume: boolean;
  /** How skills reach the model. */
  skills: BackendSkillDelivery;
  /** How much usage the backend reports. */
  usage: BackendUsageSupport;
}

/** One role turn asked of a backend. */
export interface TurnRequest {
  /** The prompt. On a resumed thread it is only the new part; the provider remembers the rest. */
  prompt: string;
  /** Absolute working directory the agent runs in. Resume a thread from the same `cwd` it was created in. */
  cwd: string;
  /** Model to use; the adapter's default (or the CLI's) when absent. */
  model?: string;
  /** Provider thread to resume; absent starts a fresh thread. */
  threadId?: string;
  /** Absolute paths of skills — each a skill directory or its `SKILL.md` — for `native` delivery. */
  skillPaths?: readonly string[];
  /** Wall-clock limit for the whole turn; past it the process group is killed and the turn is `timeout`. */
  timeoutMs: number;
  /** Extra environment variables for this turn (added to the adapter's environment). */
  env?: Readonly<Record<string, string>>;
}

/** What a successful turn produced. */
export interface TurnResult {
  /** The final answer text of the turn. */
  text: string;
  /** The provider thread the turn ran in (to resume next time), or `null` on a fresh-only backend. */
  threadId: string | null;
  /** Normalized usage; buckets the backend did not report are `null`, never 0. */
  usage: Usage;
  /** Wall-clock duration measured by the adapter. */
  durationMs: number;
  /** Exit code of the CLI process, or `null` for a backend that runs no process. */
  exitCode: number | null;
}

/**
 * The Backend port: one coding-agent CLI (or API) that runs one role turn, fresh or resumed.
 *
 * `runTurn` never throws and never rejects. Its error `code`s are stable:
 *
 * - `invalid_input` — the request failed validation (nothing was started).
 * - `unsupported` — the request names a thread but the backend is fresh-only.
 * - `resume_failed` — the thread to resume is gone (the CLI's own message or exit code, as
 *   researched per CLI); the host may start fresh and re-seed the context.
 * - `timeout` — the turn ran past `timeoutMs`; the process group was killed.
 * - `aborted` — the caller's `AbortSignal` fired; the process group was killed.
 * - `backend_failed` — a non-zero exit or an in-band error event (an exit code of 0 with an error
 *   event is still a failure).
 * - `corrupt` — the output is not what the CLI promises (not JSON, no terminal event).
 * - `too_large` — the prompt or an output line exceeds a limit.
 * - `unavailable` — the command is not installed (or an API is unreachable).
 *
 * Every error carries `details.backend` and, when one was seen, `details.threadId` — an
 * interrupted fresh turn can still be resumed from it.
 */
export interface Backend {
  /** Stable backend id, e.g. `claude-code`, `codex`, `scripted`. */
  readonly id: string;
  /** What the backend can do. */
  readonly capabilities: BackendCapabilities;
  /**
   * Runs one turn. `signal` aborts it (idempotent: aborting twice, or after the turn ended, does
   * nothing more).
   */
  runTurn(request: TurnRequest, signal?: AbortSignal): ResultAsync<TurnResult, KeelError>;
}

/** Longest thread id accepted (ids reach argv; pi also accepts a session file path). */
export const MAX_THREAD_ID_LENGTH = 1024;
/** Longest turn timeout accepted: one day. */
export const MAX_TURN_TIMEOUT_MS = 24 * 60 * 60 * 1000;

const absolutePath = z
  .string()
  .min(1)
  .refine((path) => isAbsolute(path), { message: "must be an absolute path" })
  .refine((path) => !path.includes("\0"), { message: "must not contain NUL" });

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** zod schema of {@link TurnRequest}. Unknown keys are rejected. */
export const TurnRequestSchema = z.strictObject({
  prompt: z
    .string()
    .min(1, { message: "must not be empty" })
    .refine((prompt) => !prompt.includes("\0"), { message: "must not contain NUL" }),
  cwd: absolutePath,
  model: z
    .string()
    .min(1)
    .max(256)
    .refine((model) => !model.startsWith("-") && !CONTROL_CHARACTERS.test(model), {
      message: "must not start with '-' or contain control characters",
    })
    .optional(),
  threadId: z
    .string()
    .min(1)
    .max(MAX_THREAD_ID_LENGTH)
    .refine((id) => !id.startsWith("-") && !/\s/.test(id) && !CONTROL_CHARACTERS.test(id), {
      message: "must not start with '-' or contain whitespace or control characters",
    })
    .optional(),
  skillPaths: z.array(absolutePath).max(512).optional(),
  timeoutMs: z.number().int().positive().max(MAX_TURN_TIMEOUT_MS),
  env: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: "environment variable names are letters, digits and '_'" }),
      z.string().refine((value) => !value.includes("\0"), { message: "must not contain NUL" }),
    )
    .optional(),
});

/**
 * Validates a turn request (the first thing every adapter does).
 *
 * @returns the request, or `invalid_input` naming the first problem.
 */
export function validateTurnRequest(request: unknown): Result<TurnRequest, KeelError> {
  return validate(TurnRequestSchema, withPlainEnv(request), "turn request") as Result<TurnRequest, KeelError>;
}

/**
 * `process.env` is not a plain object, so zod refuses it as a record: an `env` field is copied
 * into a plain object before validation.
 */
export function withPlainEnv<T>(input: T): T {
  if (typeof input !== "object" || input === null) return input;
  const env = (input as { env?: unknown }).env;
  if (typeof env !== "object" || env === null) return input;
  return { ...input, env: { ...env } };
}
