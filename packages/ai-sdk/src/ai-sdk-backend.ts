import {
  BACKEND_ERROR_CODES,
  backendError,
  safeTurnListener,
  validateBackendTurnRequest,
  withBackendContext,
  type Backend,
  type BackendTurnListener,
  type BackendTurnRequest,
  type BackendTurnResult,
} from "@keel/backend";
import { addUsage, KeelError, newId, validate, validateOrThrow, type Usage } from "@keel/core";
import { openTranscript, type Transcript, type TranscriptContext, type TranscriptEntryInput } from "@keel/transcript";
import { generateText, stepCountIs, type ModelMessage } from "ai";
import { err, errAsync, ok, ResultAsync, type Result } from "neverthrow";
import { z } from "zod";
import { AiSdkBackendOptionsSchema, AiSdkModelSchema, AiSdkProviderOptionsSchema, type AiSdkBackendOptions, type AiSdkProviderOptions } from "./ai-sdk-backend-options.js";
import { compactThread, needsCompaction } from "./internal/ai-sdk-compaction.js";
import { aiSdkError } from "./internal/ai-sdk-errors.js";
import { streamTurn } from "./internal/ai-sdk-progress.js";
import { turnText, type GenerateTextResult } from "./internal/ai-sdk-result.js";
import { turnUsage } from "./internal/ai-sdk-usage.js";
import { isRecord } from "./internal/message-parts.js";
import { fileAccessOf } from "./internal/tool-file-access.js";
import { fromModelMessages, responseMessagesOf, toModelMessages } from "./model-messages.js";

/** The tool loop's step limit when `stopWhen` is not given. */
export const DEFAULT_MAX_STEPS = 20;

/** The model's provider id (`openai.responses`, `anthropic.messages` …), or `undefined` for a gateway id. */
function providerOf(model: AiSdkBackendOptions["model"]): string | undefined {
  return isRecord(model) && typeof model.provider === "string" ? model.provider : undefined;
}

/** A turn's optional `AbortSignal`. */
const SignalSchema = z.custom<AbortSignal>((value) => value instanceof AbortSignal, "signal must be an AbortSignal").optional();

const CallProviderOptionsInputSchema = z.strictObject({ model: AiSdkModelSchema, given: AiSdkProviderOptionsSchema.optional() });

/**
 * The provider options of a call: the host's, with `openai.store: false` for an OpenAI Responses
 * model unless the host set it. Why: the Responses provider sends earlier assistant output as
 * references to items stored server-side; a thread restored from Keel (another host, a later
 * day, an expired item) must carry them inline.
 *
 * @throws KeelError `invalid_input` when `model` is not a `LanguageModel` or a model id, or
 * `given` is not provider options (an object of objects) or `undefined`: a plain value answers a
 * plain value, and a caller's mistake is not read as "no options".
 */
export function callProviderOptions(model: AiSdkBackendOptions["model"], given: AiSdkProviderOptions | undefined): AiSdkProviderOptions | undefined {
  validateOrThrow(CallProviderOptionsInputSchema, { model, given }, "callProviderOptions arguments");
  const provider = providerOf(model);
  if (provider === undefined || !provider.endsWith(".responses")) return given;
  const openai = given?.openai ?? {};
  if (Object.hasOwn(openai, "store")) return given;
  return { ...given, openai: { ...openai, store: false } };
}

function modelChange(model: AiSdkBackendOptions["model"]): { provider: string; modelId: string } | undefined {
  if (!isRecord(model) || typeof model.provider !== "string" || typeof model.modelId !== "string") return undefined;
  return { provider: model.provider, modelId: model.modelId };
}

/**
 * A Keel `Backend` over the Vercel AI SDK: each turn runs the host's `LanguageModel` and tools as
 * a multi-step tool loop (`generateText` with `stopWhen`), and the thread lives in a
 * `@keel/transcript` on the given store, so it survives a restart and moves between hosts with
 * the store. Works with `ai` 6 and 7.
 *
 * - A fresh turn starts a new transcript; the thread id is its session id.
 * - A resumed turn builds the transcript's context (compaction summary included), converts it
 *   with `toModelMessages`, appends the prompt and runs.
 * - When the turn succeeds, the prompt and every message of every step are appended (with a
 *   `model_change` when the model changed); a failed turn leaves the thread as it was.
 * - Usage is the sum of the steps' usages in Keel's buckets (unknown stays `null`); `toolCalls`
 *   counts every tool call; `fileAccess` comes from the tools named in `toolFileAccess`.
 * - Errors: a thread the store does not hold is `resume_failed`; a provider error
 *   (`APICallError`) is `backend_failed`, retryable for 408, 429 and 5xx (529 included) or when the
 *   SDK says so; the caller's signal is `aborted`, `timeoutMs` is `timeout`; a store failure keeps
 *   the store's code, or `io_failed` (`details.storeCode`) for a code of its own. `runTurn` never throws.
 * - With an OpenAI Responses model, `providerOptions.openai.store` is `false` unless set: the
 *   restored history is sent inline.
 * - With `telemetry`, every call (the compaction's summary included) runs with the SDK's own
 *   telemetry, its prompts and answers left off its spans unless `recordInputs`/`recordOutputs` say.
 * - With `compaction`, a resumed thread near its context window is compacted first (Keel's
 *   transcript compaction, summarized by the same model); the summary calls count in the usage.
 * - Progress: with `runTurn`'s `onEvent`, the loop runs as `streamText` (same arguments, same
 *   result) and reports each text delta, each tool call and the file access of each call of a
 *   tool named in `toolFileAccess` (as its call arrives: a read's bytes are in the result only).
 *   Without a listener it is one `generateText`.
 *
 * Skills and project instructions reach the model through the prompt (`capabilities.skills` and
 * `instructions` are `prompt`); `request.model`, `env` and `skillPaths` are not used (the model is
 * the host's object).
 *
 * @throws KeelError `invalid_input` for bad options.
 *
 * @example
 * ```ts
 * const backend = createAiSdkBackend({ model: openai.chat("gpt-5"), tools: { read }, store, toolFileAccess: { read: { op: "read", pathArgument: "path" } } });
 * const first = (await backend.runTurn({ prompt: "Read a.ts", cwd: process.cwd(), timeoutMs: 60_000 }))._unsafeUnwrap();
 * await backend.runTurn({ prompt: "Now fix it", cwd: process.cwd(), timeoutMs: 60_000, threadId: first.threadId! });
 * ```
 */
export function createAiSdkBackend(options: AiSdkBackendOptions): Backend {
  validateOrThrow(AiSdkBackendOptionsSchema, options, "AI SDK backend options");
  const id = options.id ?? "ai-sdk";
  const rules = options.toolFileAccess ?? {};
  const stopWhen = options.stopWhen ?? stepCountIs(DEFAULT_MAX_STEPS);
  const providerOptions = callProviderOptions(options.model, options.providerOptions);
  // The SDK records prompts and answers on its spans by default; Keel's promise is no text unless asked.
  const telemetry = options.telemetry === undefined ? undefined : { recordInputs: false, recordOutputs: false, ...options.telemetry };
  const transcriptOptions = { store: options.store, ...(options.clock ? { clock: options.clock } : {}), ...(options.events ? { events: options.events } : {}) };

  /**
   * A transcript failure as a backend error: codes of the Backend port kept, a store's own codes
   * (`conflict`: another turn wrote the thread first, `lease_lost`, …) as `io_failed` with
   * `details.storeCode` and the store's `retryable`.
   */
  const storeFailure = (error: KeelError, threadId: string | null): KeelError =>
    (BACKEND_ERROR_CODES as readonly string[]).includes(error.code)
      ? withBackendContext(error, id, threadId)
      : backendError("io_failed", id, `the thread's store failed: ${error.message}`, { threadId, retryable: error.retryable, cause: error, extra: { storeCode: error.code } });

  const open = (request: BackendTurnRequest): ResultAsync<Transcript, KeelError> => {
    if (request.threadId === undefined) return openTranscript({ ...transcriptOptions, sessionId: newId() }).mapErr((error) => storeFailure(error, null));
    const threadId = request.threadId;
    return openTranscript({ ...transcriptOptions, sessionId: threadId, create: false }).mapErr((error) =>
      error.code === "not_found" || error.code === "invalid_input"
        ? backendError("resume_failed", id, `thread ${threadId} is not in the store: ${error.message}`, { threadId, cause: error })
        : storeFailure(error, threadId),
    );
  };

  const loadHistory = (transcript: Transcript): Result<{ context: TranscriptContext; history: ModelMessage[] }, KeelError> =>
    transcript
      .buildContext()
      .andThen((context) => toModelMessages(context).map((history) => ({ context, history })))
      .mapErr((error) => storeFailure(error, transcript.sessionId));

  /** Appends a model change (when the model is not the one in force) and the turn's entries, in order. */
  const appendTurn = async (transcript: Transcript, context: TranscriptContext, entries: readonly TranscriptEntryInput[]): Promise<Result<void, KeelError>> => {
    const change = modelChange(options.model);
    const inForce = context.model;
    const all: TranscriptEntryInput[] = change && (inForce?.provider !== change.provider || inForce.modelId !== change.modelId) ? [{ type: "model_change", ...change }, ...entries] : [...entries];
    for (const entry of all) {
      const appended = await transcript.append(entry);
      if (appended.isErr()) return err(storeFailure(appended.error, transcript.sessionId));
    }
    return ok(undefined);
  };

  const run = async (transcript: Transcript, request: BackendTurnRequest, signal: AbortSignal | undefined, onEvent: BackendTurnListener | undefined): Promise<Result<BackendTurnResult, KeelError>> => {
    const threadId = transcript.sessionId;
    const started = Date.now();
    const prompt: ModelMessage = { role: "user", content: request.prompt };
    const timeout = AbortSignal.timeout(request.timeoutMs);
    const abortSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const interrupted = (cause?: unknown): KeelError | undefined => {
      if (signal?.aborted) return backendError("aborted", id, "the turn was aborted by the caller", { threadId, cause });
      if (timeout.aborted) return backendError("timeout", id, `the turn ran past ${request.timeoutMs} ms`, { threadId, cause });
      return undefined;
    };
    let loaded = loadHistory(transcript);
    if (loaded.isErr()) return err(loaded.error);
    let compactionUsage: Usage | null = null;
    if (options.compaction && request.threadId !== undefined && needsCompaction(loaded.value.history, request.prompt, options.compaction)) {
      const compacted = await compactThread(transcript, options.compaction, {
        model: options.model,
        backend: id,
        abortSignal,
        ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
        ...(providerOptions === undefined ? {} : { providerOptions }),
        ...(telemetry === undefined ? {} : { telemetry }),
      });
      if (compacted.isErr()) return err(interrupted(compacted.error) ?? storeFailure(compacted.error, threadId));
      compactionUsage = compacted.value;
      loaded = loadHistory(transcript);
      if (loaded.isErr()) return err(loaded.error);
    }
    const { history, context } = loaded.value;
    let result: GenerateTextResult;
    const args = {
      model: options.model,
      messages: [...history, prompt],
      ...(options.system === undefined ? {} : { system: options.system }),
      ...(options.tools === undefined ? {} : { tools: options.tools }),
      stopWhen,
      abortSignal,
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
      ...(providerOptions === undefined ? {} : { providerOptions }),
      ...(telemetry === undefined ? {} : { experimental_telemetry: telemetry }),
    };
    try {
      // Observed, the loop streams (text deltas, tool calls as they come); unobserved it is one generateText.
      result = onEvent ? await streamTurn(args, rules, safeTurnListener(onEvent)) : await generateText(args);
    } catch (error) {
      return err(interrupted(error) ?? aiSdkError(error, id, threadId));
    }
    if (signal?.aborted) return err(backendError("aborted", id, "the turn was aborted by the caller", { threadId }));
    const entries = responseMessagesOf(result).andThen((messages) => fromModelMessages([prompt, ...messages]));
    if (entries.isErr()) return err(backendError("corrupt", id, `the AI SDK answered messages Keel cannot store: ${entries.error.message}`, { threadId, cause: entries.error }));
    const appended = await appendTurn(transcript, context, entries.value);
    if (appended.isErr()) return err(appended.error);
    return ok({
      text: turnText(result),
      threadId,
      usage: compactionUsage ? addUsage(compactionUsage, turnUsage(result.steps)) : turnUsage(result.steps),
      durationMs: Date.now() - started,
      exitCode: null,
      fileAccess: fileAccessOf(result.steps, rules),
      toolCalls: result.steps.reduce((sum, step) => sum + step.toolCalls.length, 0),
    });
  };

  // `run` settles every failure it expects as a value; anything else (a host's tool object that
  // breaks the SDK before the call) is caught here, so `runTurn` never rejects.
  const settle = (transcript: Transcript, request: BackendTurnRequest, signal: AbortSignal | undefined, onEvent: BackendTurnListener | undefined): ResultAsync<BackendTurnResult, KeelError> =>
    new ResultAsync(
      run(transcript, request, signal, onEvent).catch((error: unknown) => err(aiSdkError(error, id, transcript.sessionId))),
    );

  return {
    id,
    capabilities: { resume: true, skills: "prompt", usage: "full", instructions: "prompt" },
    runTurn(request: BackendTurnRequest, signal?: AbortSignal, onEvent?: BackendTurnListener): ResultAsync<BackendTurnResult, KeelError> {
      // The request and the signal are read once, inside the checks: a value whose reading throws is invalid_input (no thread id is known then).
      const valid = validateBackendTurnRequest(request).andThen((checked) => validate(SignalSchema, signal, "turn signal").map(() => checked));
      if (valid.isErr()) return errAsync(withBackendContext(valid.error, id, null));
      if (signal?.aborted) return errAsync(backendError("aborted", id, "the turn was aborted before it started", { threadId: valid.value.threadId ?? null }));
      return open(valid.value).andThen((transcript) => settle(transcript, valid.value, signal, onEvent));
    },
  };
}
