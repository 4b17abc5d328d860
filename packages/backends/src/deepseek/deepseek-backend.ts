import { performance } from "node:perf_hooks";
import { validateOrThrow, type KeelError } from "@keel/core";
import { err, errAsync, ok, ResultAsync, type Result } from "neverthrow";
import { z } from "zod";
import { backendError, withBackendContext } from "@keel/backend";
import { validateBackendTurnRequest, type Backend, type BackendCapabilities, type BackendTurnRequest, type BackendTurnResult } from "@keel/backend";
import { asArray, asRecord, asString, errorMessage, type BackendAdapterInfo } from "../kit/index.js";
import { normalizeDeepSeekUsage } from "./deepseek-usage.js";

const ID = "deepseek";

const CAPABILITIES = Object.freeze({ resume: false, skills: "prompt", usage: "full", instructions: "prompt" }) satisfies BackendCapabilities;

/** What `keel doctor` shows for the DeepSeek adapter: an API (no CLI), usable when its key is set. */
export const adapterInfo: BackendAdapterInfo<DeepSeekBackendOptions> = {
  id: ID,
  kind: "http",
  command: null,
  capabilities: CAPABILITIES,
  provenAgainst: "recordings",
  versions: null,
  apiKeyEnv: "DEEPSEEK_API_KEY",
  create: (options) => createDeepSeekBackend(options),
};

/** Options of {@link createDeepSeekBackend}. */
export interface DeepSeekBackendOptions {
  /** API base URL (default `https://api.deepseek.com`); any OpenAI-compatible chat-completions server works. */
  baseUrl?: string;
  /** API key; otherwise read from the environment variable `apiKeyEnv` (request env first, then `process.env`). */
  apiKey?: string;
  /** Environment variable holding the key (default `DEEPSEEK_API_KEY`). */
  apiKeyEnv?: string;
  /** Default model (default `deepseek-chat`). */
  model?: string;
  /** System message sent before the prompt. */
  systemPrompt?: string;
  /** `max_tokens` of the completion. */
  maxTokens?: number;
  /** `temperature`. */
  temperature?: number;
  /** Largest response body accepted (default 16 MiB). */
  maxResponseBytes?: number;
  /** The `fetch` to use (default the global one). */
  fetch?: typeof fetch;
}

const OptionsSchema = z.strictObject({
  baseUrl: z.url().optional(),
  apiKey: z.string().min(1).optional(),
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
  model: z.string().min(1).optional(),
  systemPrompt: z.string().min(1).optional(),
  maxTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxResponseBytes: z.number().int().min(1024).optional(),
  fetch: z.custom<typeof fetch>((value) => typeof value === "function", { message: "must be a function" }).optional(),
});

type Stop = { reason: "timeout" | "aborted" } | undefined;

function readCompletion(status: number, text: string): Result<{ text: string; raw: Record<string, unknown> }, KeelError> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const record = asRecord(body);
  if (status === 401 || status === 403) {
    return err(backendError("backend_failed", ID, `${ID} rejected the API key (HTTP ${status})`, { retryable: false, extra: { status } }));
  }
  if (status === 429 || status >= 500) {
    const reason = errorMessage(record?.error) ?? `HTTP ${status}`;
    return err(backendError("unavailable", ID, `${ID} is busy or down: ${reason}`, { retryable: true, extra: { status } }));
  }
  if (record?.error !== undefined || status >= 400) {
    const reason = errorMessage(record?.error) ?? `HTTP ${status}`;
    return err(backendError("backend_failed", ID, `${ID} reported an error: ${reason}`, { extra: { status } }));
  }
  if (!record) return err(backendError("corrupt", ID, `${ID} answered with something that is not a JSON object: ${text.slice(0, 200)}`));
  const message = asRecord(asRecord(asArray(record.choices)[0])?.message);
  const content = asString(message?.content);
  if (content === undefined) return err(backendError("corrupt", ID, `${ID} answer has no choices[0].message.content`));
  return ok({ text: content, raw: record });
}

/**
 * DeepSeek, fresh-only: one OpenAI-compatible `POST <baseUrl>/chat/completions` per turn over
 * `fetch`, with the prompt as the only user message. There is no server-side thread:
 * `capabilities.resume` is false, a request naming a thread is `unsupported`, and `threadId` is
 * always `null`. Skills are `prompt` (put the skill contract into the prompt); `cwd` is validated
 * but unused.
 *
 * Errors: no API key → `unavailable` (not retryable); network failure, HTTP 429 or 5xx →
 * `unavailable` (retryable); HTTP 401/403, an `error` body or another 4xx → `backend_failed`; a
 * body that is not a completion → `corrupt`; `timeout` and `aborted` cancel the request. Usage
 * maps cache hit/miss and reasoning tokens; no cost is reported.
 */
export function createDeepSeekBackend(options: DeepSeekBackendOptions = {}): Backend {
  validateOrThrow(OptionsSchema, options, "deepseek backend options");
  const baseUrl = (options.baseUrl ?? "https://api.deepseek.com").replace(/\/+$/, "");
  const apiKeyEnv = options.apiKeyEnv ?? "DEEPSEEK_API_KEY";
  const maxResponseBytes = options.maxResponseBytes ?? 16 * 1024 * 1024;
  const fetchImpl = options.fetch ?? globalThis.fetch;

  const call = (request: BackendTurnRequest, apiKey: string, signal?: AbortSignal): ResultAsync<BackendTurnResult, KeelError> => {
    const started = performance.now();
    const controller = new AbortController();
    let stop: Stop;
    const timer = setTimeout(() => {
      stop ??= { reason: "timeout" };
      controller.abort();
    }, request.timeoutMs);
    const onAbort = () => {
      stop ??= { reason: "aborted" };
      controller.abort();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const system = options.systemPrompt ? [{ role: "system", content: options.systemPrompt }] : [];
    const messages = [...system, { role: "user", content: request.prompt }];
    const body = {
      model: request.model ?? options.model ?? "deepseek-chat",
      messages,
      stream: false,
      ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    };
    const failed = (cause: unknown): KeelError => {
      if (stop?.reason === "timeout") return backendError("timeout", ID, `${ID} did not answer within ${request.timeoutMs} ms`, { cause });
      if (stop?.reason === "aborted") return backendError("aborted", ID, `${ID} request was aborted by the caller`, { cause });
      const reason = cause instanceof Error ? cause.message : String(cause);
      return backendError("unavailable", ID, `${ID} could not be reached at ${baseUrl}: ${reason}`, {
        retryable: true,
        cause,
      });
    };
    const exchange = ResultAsync.fromThrowable(async () => {
      const response = await fetchImpl(`${baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      const declared = Number(response.headers.get("content-length") ?? "0");
      if (declared > maxResponseBytes) {
        await response.body?.cancel();
        return { status: response.status, text: "", tooLarge: declared };
      }
      const text = await response.text();
      return { status: response.status, text, tooLarge: Buffer.byteLength(text) > maxResponseBytes ? Buffer.byteLength(text) : 0 };
    }, failed);
    const outcome = exchange()
      .andThen(({ status, text, tooLarge }) => {
        if (tooLarge > 0) return err(backendError("too_large", ID, `${ID} answer of ${tooLarge} bytes exceeds ${maxResponseBytes}`));
        return readCompletion(status, text);
      })
      .andThen(({ text, raw }) => {
        const usage = normalizeDeepSeekUsage(raw);
        if (usage.isErr()) {
          return err(backendError("corrupt", ID, `${ID} answer has an invalid usage: ${usage.error.message}`, { cause: usage.error }));
        }
        const durationMs = Math.round(performance.now() - started);
        // A chat completion shows no agent tool calls: the count is unknown (null), never 0.
        return ok<BackendTurnResult, KeelError>({ text, threadId: null, usage: usage.value, durationMs, exitCode: null, fileAccess: [], toolCalls: null });
      });
    return new ResultAsync(
      Promise.resolve(outcome).then((result) => {
        done();
        return result;
      }),
    );
  };

  const runTurn = (input: BackendTurnRequest, signal?: AbortSignal): ResultAsync<BackendTurnResult, KeelError> => {
    const valid = validateBackendTurnRequest(input);
    if (valid.isErr()) return errAsync(withBackendContext(valid.error, ID, null));
    const request = valid.value;
    if (request.threadId !== undefined) {
      return errAsync(
        backendError("unsupported", ID, `${ID} is fresh-only and cannot resume thread ${request.threadId}: omit threadId`, {
          threadId: request.threadId,
        }),
      );
    }
    if (signal?.aborted) return errAsync(backendError("aborted", ID, `${ID} turn was aborted before it started`));
    const apiKey = options.apiKey ?? request.env?.[apiKeyEnv] ?? process.env[apiKeyEnv];
    if (!apiKey) {
      return errAsync(backendError("unavailable", ID, `${ID} has no API key: set ${apiKeyEnv} or the apiKey option`, { retryable: false }));
    }
    return call(request, apiKey, signal);
  };

  return Object.freeze({ id: ID, capabilities: CAPABILITIES, runTurn });
}
