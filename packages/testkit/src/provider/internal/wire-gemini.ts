// Gemini: `POST /v1beta/models/<model>:generateContent` (plain JSON) and
// `:streamGenerateContent` (SSE with `alt=sse`, else one JSON array). promptTokenCount is the
// whole input with cachedContentTokenCount inside; thoughts are counted apart from candidates.
import { fullUsage, type FakeErrorReply, type FakeTurnReply } from "../provider-script.js";
import { errorHeaders, errorMessage, nonEmptyArray, sseFrame, toolCallId, type WireAnswer, type WireContext, type WireFormat } from "./wire-format.js";

const GENERATE = /(^|\/)models\/([^/:]+):(generateContent|streamGenerateContent)$/;

function status(code: number): string {
  if (code === 429) return "RESOURCE_EXHAUSTED";
  if (code === 503) return "UNAVAILABLE";
  if (code === 504) return "DEADLINE_EXCEEDED";
  if (code >= 500) return "INTERNAL";
  if (code === 401) return "UNAUTHENTICATED";
  if (code === 403) return "PERMISSION_DENIED";
  if (code === 404) return "NOT_FOUND";
  return "INVALID_ARGUMENT";
}

export const gemini: WireFormat = {
  format: "gemini",
  matches: (path) => GENERATE.test(path),
  streaming: (path) => path.endsWith(":streamGenerateContent"),
  model: (path) => GENERATE.exec(path)?.[2] ?? null,
  hasTools: (body) => Array.isArray(body.tools) && body.tools.some((tool) => nonEmptyArray((tool as { functionDeclarations?: unknown }).functionDeclarations)),
  answer(reply: FakeTurnReply, context: WireContext): WireAnswer {
    const usage = fullUsage(reply.usage);
    const input = usage.inputUncached + usage.cacheRead + usage.cacheWrite;
    const parts: Record<string, unknown>[] = [];
    if (reply.text !== undefined) parts.push({ text: reply.text });
    (reply.toolCalls ?? []).forEach((call, index) =>
      parts.push({ functionCall: { id: toolCallId("call_", context.sequence, index, call.id), name: call.name, args: call.arguments } }),
    );
    const body = {
      candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
      usageMetadata: {
        promptTokenCount: input,
        candidatesTokenCount: usage.output - usage.reasoning,
        totalTokenCount: input + usage.output,
        ...(usage.cacheRead > 0 ? { cachedContentTokenCount: usage.cacheRead } : {}),
        ...(usage.reasoning > 0 ? { thoughtsTokenCount: usage.reasoning } : {}),
      },
      modelVersion: context.model,
      responseId: `fake-${context.sequence}`,
    };
    if (!context.stream) return { kind: "json", status: 200, body };
    if (!context.sse) return { kind: "json", status: 200, body: [body] };
    return { kind: "sse", frames: [sseFrame(body)] };
  },
  error(reply: FakeErrorReply): WireAnswer {
    return {
      kind: "json",
      status: reply.error.status,
      headers: errorHeaders(reply),
      body: { error: { code: reply.error.status, message: errorMessage(reply), status: reply.error.type ?? status(reply.error.status) } },
    };
  },
};
