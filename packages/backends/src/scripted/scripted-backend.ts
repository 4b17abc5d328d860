import {
  estimateTokens,
  systemClock,
  utf8Bytes,
  validateOrThrow,
  type Clock,
  type KeelError,
  type KeelErrorCode,
  type TokenEstimator,
  type Usage,
} from "@keel/core";
import { err, errAsync, ok, ResultAsync, type Result } from "neverthrow";
import { z } from "zod";
import { backendError, withBackendContext } from "@keel/backend";
import { validateBackendTurnRequest, type Backend, type BackendSkillDelivery, type BackendTurnRequest, type BackendTurnResult } from "@keel/backend";
import {
  ScriptedStepSchema,
  resolveStep,
  waitOrAbort,
  type ScriptedExchange,
  type ScriptedFailure,
  type ScriptedReply,
  type ScriptedStep,
  type ScriptedTurn,
} from "./scripted-script.js";
import { modelScriptedUsage } from "./scripted-usage.js";

/** A provider-side thread of the scripted backend. */
export interface ScriptedThread {
  /** The thread id. */
  readonly id: string;
  /** Exchanges so far, oldest first (an interrupted turn keeps its prompt with an empty answer). */
  readonly exchanges: ScriptedExchange[];
}

/** One call the scripted backend answered, for assertions and reports. */
export interface ScriptedCall {
  /** 1-based call number. */
  call: number;
  /** Whether the call continued a thread. */
  action: "fresh" | "resumed";
  /** The thread the call ran in, or `null`. */
  threadId: string | null;
  /** The prompt the host sent. */
  prompt: string;
  /** UTF-8 bytes of the prompt the host sent. */
  promptBytes: number;
  /** Input tokens the provider observed: the thread so far plus the new prompt. */
  inputTokens: number;
  /** Reported usage, or `null` when the turn failed. */
  usage: Usage | null;
  /** `ok` or the error code. */
  outcome: "ok" | KeelErrorCode;
}

/** Options of {@link createScriptedBackend}. */
export interface ScriptedBackendOptions {
  /** Backend id (default `scripted`). */
  id?: string;
  /** Whether threads can be resumed (a fresh-only scripted backend answers a thread with `unsupported`). */
  resumable: boolean;
  /**
   * The answers: one step (used for every call — typically a function of the turn) or a list
   * consumed one per call (past its end a call fails with `backend_failed`).
   */
  script: ScriptedStep | readonly ScriptedStep[];
  /** Declared skill delivery (default `prompt`). */
  skills?: BackendSkillDelivery;
  /** Token estimator (default `estimateTokens`: UTF-8 bytes / 3). */
  estimator?: TokenEstimator;
  /** Tokens of the provider's own system prompt, charged on every call (default 0). */
  baseInputTokens?: number;
  /**
   * Report the remembered part of a resumed thread as `cacheRead` instead of `inputUncached`
   * (default false). The total input is the same either way.
   */
  promptCache?: boolean;
  /** Clock for `durationMs` (default the system clock). */
  clock?: Clock;
  /** Provider-side thread store, to share threads between instances (default a new one). */
  threads?: Map<string, ScriptedThread>;
}

/** The scripted backend: a {@link Backend} plus what it remembers, for tests. */
export interface ScriptedBackend extends Backend {
  /** Every call so far, in order. */
  readonly calls: readonly ScriptedCall[];
  /** A thread the provider remembers, or `undefined`. */
  thread(threadId: string): ScriptedThread | undefined;
  /** Makes the provider forget a thread (as a CLI's session store may); the next resume is `resume_failed`. */
  forgetThread(threadId: string): boolean;
}

const count = z.number().int().nonnegative();
const OptionsSchema = z.strictObject({
  id: z.string().min(1).max(128).optional(),
  resumable: z.boolean(),
  script: z.union([ScriptedStepSchema, z.array(ScriptedStepSchema).min(1)]),
  skills: z.enum(["native", "staged", "prompt"]).optional(),
  estimator: z.custom<TokenEstimator>((value) => typeof value === "function").optional(),
  baseInputTokens: count.optional(),
  promptCache: z.boolean().optional(),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function").optional(),
  threads: z.custom<Map<string, ScriptedThread>>((value) => value instanceof Map).optional(),
});

const FAILURE_CODES: Record<Exclude<ScriptedFailure, "hang" | "timeout">, KeelErrorCode> = {
  backend_failed: "backend_failed",
  garbage: "corrupt",
  resume_failed: "resume_failed",
  unavailable: "unavailable",
};

/**
 * A deterministic backend for tests, examples and the demo that behaves like a real provider:
 * a fresh turn starts an empty thread; a resumed thread remembers its earlier turns, so the host
 * sends only the new prompt while the observed input tokens grow with the thread (`base + every
 * earlier prompt and answer + the new prompt`, estimated with `estimateTokens`); an unknown
 * thread is `resume_failed`; the script can make a turn fail, time out, hang or print garbage;
 * and script functions see the prompt, so answers (a reviewer verdict from a diff) can depend on
 * what the host sent. Throws `invalid_input` at once for bad options.
 */
export function createScriptedBackend(options: ScriptedBackendOptions): ScriptedBackend {
  validateOrThrow(OptionsSchema, options, "scripted backend options");
  const id = options.id ?? "scripted";
  const clock = options.clock ?? systemClock;
  const threads = options.threads ?? new Map<string, ScriptedThread>();
  const steps: readonly ScriptedStep[] | null = Array.isArray(options.script) ? options.script : null;
  const usageModel = {
    estimator: options.estimator ?? estimateTokens,
    baseInputTokens: options.baseInputTokens ?? 0,
    promptCache: options.promptCache === true,
  };
  const calls: ScriptedCall[] = [];
  let nextThread = 1;

  const newThread = (): ScriptedThread => {
    let candidate: string;
    do candidate = `${id}-thread-${String(nextThread++).padStart(4, "0")}`;
    while (threads.has(candidate));
    const thread = { id: candidate, exchanges: [] };
    threads.set(candidate, thread);
    return thread;
  };

  /** The reply of one turn, or the error the turn ends with before any waiting. */
  const replyFor = (turn: ScriptedTurn): Result<ScriptedReply, KeelError> => {
    const step = steps ? steps[turn.call - 1] : (options.script as ScriptedStep);
    const context = { threadId: turn.threadId };
    return resolveStep(step, turn, `${id} script reply ${turn.call}`)
      .mapErr((error) => withBackendContext(error, id, turn.threadId))
      .andThen((resolved) => {
        if ("reply" in resolved) return ok(resolved.reply);
        if ("missing" in resolved) {
          const message = `${id} script has no step for call ${turn.call} (it has ${steps?.length ?? 0})`;
          return err(backendError("backend_failed", id, message, { ...context, extra: { reason: "script_exhausted" } }));
        }
        const message = `${id} script step ${turn.call} threw: ${String(resolved.threw)}`;
        return err(backendError("backend_failed", id, message, { ...context, cause: resolved.threw }));
      });
  };

  const run = async (request: BackendTurnRequest, signal?: AbortSignal): Promise<Result<BackendTurnResult, KeelError>> => {
    const started = clock.now();
    const call = calls.length + 1;
    const resuming = request.threadId !== undefined;
    const found = resuming ? threads.get(request.threadId!) : undefined;
    const thread = found ?? (!resuming && options.resumable ? newThread() : undefined);
    const threadId = resuming ? request.threadId! : (thread?.id ?? null);
    const estimatedInput = usageModel.baseInputTokens + usageModel.estimator(request.prompt);
    const record = (outcome: ScriptedCall["outcome"], inputTokens = estimatedInput, usage: Usage | null = null): void => {
      const action = resuming ? "resumed" : "fresh";
      calls.push({ call, action, threadId, prompt: request.prompt, promptBytes: utf8Bytes(request.prompt), inputTokens, usage, outcome });
    };
    const fail = (error: KeelError): Result<BackendTurnResult, KeelError> => {
      record(error.code);
      return err(error);
    };
    if (resuming && !found) {
      return fail(backendError("resume_failed", id, `${id} has no thread ${threadId}: start a fresh one`, { threadId }));
    }

    const history = resuming ? [...found!.exchanges] : [];
    const turn: ScriptedTurn = {
      call,
      prompt: request.prompt,
      action: resuming ? "resumed" : "fresh",
      threadId,
      threadTurn: history.length + 1,
      history,
      model: request.model ?? null,
      cwd: request.cwd,
      skillPaths: request.skillPaths ?? [],
    };
    const reply = replyFor(turn);
    if (reply.isErr()) return fail(reply.error);
    const { fail: failure, message } = reply.value;
    const interrupted = (code: "timeout" | "aborted", text: string) => {
      // The provider keeps the prompt of an interrupted turn, as a CLI's transcript would.
      thread?.exchanges.push({ prompt: request.prompt, text: "" });
      return fail(backendError(code, id, text, { threadId, extra: { call } }));
    };
    const delay = failure === "hang" ? request.timeoutMs : (reply.value.delayMs ?? 0);
    if (delay > 0) {
      const aborted = await waitOrAbort(Math.min(delay, request.timeoutMs), signal);
      if (aborted) return interrupted("aborted", `${id} turn ${call} was aborted by the caller`);
      if (delay >= request.timeoutMs) return interrupted("timeout", `${id} turn ${call} ran past ${request.timeoutMs} ms`);
    }
    if (failure === "timeout") return interrupted("timeout", message ?? `${id} turn ${call} timed out (scripted)`);
    if (failure === "resume_failed" && !resuming) {
      return fail(backendError("invalid_input", id, `${id} script step ${call} fails a resume, but the turn is fresh`, { threadId }));
    }
    if (failure === "resume_failed") threads.delete(threadId!);
    if (failure !== undefined && failure !== "hang") {
      const code = FAILURE_CODES[failure];
      const text = message ?? `${id} turn ${call} failed (scripted ${failure})`;
      return fail(backendError(code, id, text, { threadId, ...(code === "unavailable" ? { retryable: true } : {}) }));
    }
    const text = reply.value.text ?? "";
    const { usage, inputTokens } = modelScriptedUsage(usageModel, history, request.prompt, reply.value);
    thread?.exchanges.push({ prompt: request.prompt, text });
    record("ok", inputTokens, usage);
    const durationMs = reply.value.durationMs ?? Math.max(0, clock.now() - started);
    const fileAccess = (reply.value.fileAccess ?? []).map((access) => ({ ...access }));
    const toolCalls = reply.value.toolCalls === undefined ? fileAccess.length : reply.value.toolCalls;
    return ok({ text, threadId, usage, durationMs, exitCode: 0, fileAccess, toolCalls });
  };

  const runTurn = (input: BackendTurnRequest, signal?: AbortSignal): ResultAsync<BackendTurnResult, KeelError> => {
    const valid = validateBackendTurnRequest(input);
    if (valid.isErr()) return errAsync(withBackendContext(valid.error, id, null));
    const request = valid.value;
    if (request.threadId !== undefined && !options.resumable) {
      const message = `${id} is fresh-only and cannot resume threads: omit threadId`;
      return errAsync(backendError("unsupported", id, message, { threadId: request.threadId }));
    }
    if (signal?.aborted) return errAsync(backendError("aborted", id, `${id} turn was aborted before it started`));
    return new ResultAsync(run(request, signal));
  };

  return Object.freeze({
    id,
    capabilities: Object.freeze({ resume: options.resumable, skills: options.skills ?? "prompt", usage: "full" as const }),
    runTurn,
    get calls() {
      return calls as readonly ScriptedCall[];
    },
    thread: (threadId: string) => threads.get(threadId),
    forgetThread: (threadId: string) => threads.delete(threadId),
  });
}
