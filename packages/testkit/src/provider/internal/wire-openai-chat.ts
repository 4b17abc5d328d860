// OpenAI Chat Completions: `POST …/chat/completions`. prompt_tokens is the whole input with the
// cached part inside; the stream ends with a `choices: []` chunk carrying usage, then `[DONE]`.
import { fullUsage, type FakeErrorReply, type FakeTurnReply } from "../provider-script.js";
import { errorHeaders, errorMessage, nonEmptyArray, sseFrame, toolCallId, type WireAnswer, type WireContext, type WireFormat } from "./wire-format.js";

/** OpenAI's error `type` for a status (shared with the Responses format). */
export function openAiErrorType(status: number): string {
  if (status === 429) return "rate_limit_exceeded";
  if (status === 401) return "invalid_api_key";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** OpenAI's error body (shared with the Responses format). */
export function openAiError(reply: FakeErrorReply): WireAnswer {
  const type = reply.error.type ?? openAiErrorType(reply.error.status);
  return {
    kind: "json",
    status: reply.error.status,
    headers: errorHeaders(reply),
    body: { error: { message: errorMessage(reply), type, code: type, param: null } },
  };
}

export const openAiChat: WireFormat = {
  format: "openai-chat",
  matches: (path) => /(^|\/)chat\/completions$/.test(path),
  streaming: (_path, _query, body) => body.stream === true,
  model: (_path, body) => (typeof body.model === "string" ? body.model : null),
  hasTools: (body) => nonEmptyArray(body.tools) || nonEmptyArray(body.functions),
  answer(reply: FakeTurnReply, context: WireContext): WireAnswer {
    const usage = fullUsage(reply.usage);
    const input = usage.inputUncached + usage.cacheRead + usage.cacheWrite;
    const wireUsage = {
      prompt_tokens: input,
      completion_tokens: usage.output,
      total_tokens: input + usage.output,
      prompt_tokens_details: { cached_tokens: usage.cacheRead },
      completion_tokens_details: { reasoning_tokens: usage.reasoning },
    };
    const calls = (reply.toolCalls ?? []).map((call, index) => ({
      id: toolCallId("call_", context.sequence, index, call.id),
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    const finishReason = calls.length > 0 ? "tool_calls" : "stop";
    const base = { id: `chatcmpl-fake-${context.sequence}`, created: 1_700_000_000, model: context.model };
    if (!context.stream) {
      return {
        kind: "json",
        status: 200,
        body: {
          ...base,
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: reply.text ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
              finish_reason: finishReason,
            },
          ],
          usage: wireUsage,
        },
      };
    }
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => sseFrame({ ...base, object: "chat.completion.chunk", choices, ...extra });
    const frames = [chunk([{ index: 0, delta: { role: "assistant", content: reply.text ?? "" }, finish_reason: null }])];
    calls.forEach((call, index) => frames.push(chunk([{ index: 0, delta: { tool_calls: [{ index, ...call }] }, finish_reason: null }])));
    frames.push(chunk([{ index: 0, delta: {}, finish_reason: finishReason }]));
    frames.push(chunk([], { usage: wireUsage }));
    frames.push(sseFrame("[DONE]"));
    return { kind: "sse", frames };
  },
  error: openAiError,
};
