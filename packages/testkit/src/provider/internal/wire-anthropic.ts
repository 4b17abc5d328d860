// Anthropic Messages: `POST /v1/messages` (Claude Code adds `?beta=true`). Usage splits the
// three input buckets; output_tokens comes again, final, in `message_delta`.
import { fullUsage, type FakeErrorReply, type FakeTurnReply } from "../provider-script.js";
import { errorHeaders, errorMessage, nonEmptyArray, sseFrame, toolCallId, type WireAnswer, type WireContext, type WireFormat } from "./wire-format.js";

function errorType(status: number): string {
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

function content(reply: FakeTurnReply, sequence: number): Record<string, unknown>[] {
  const blocks: Record<string, unknown>[] = [];
  if (reply.text !== undefined) blocks.push({ type: "text", text: reply.text });
  (reply.toolCalls ?? []).forEach((call, index) =>
    blocks.push({ type: "tool_use", id: toolCallId("toolu_", sequence, index, call.id), name: call.name, input: call.arguments }),
  );
  return blocks;
}

export const anthropicMessages: WireFormat = {
  format: "anthropic-messages",
  matches: (path) => /(^|\/)v1\/messages$/.test(path),
  streaming: (_path, _query, body) => body.stream === true,
  model: (_path, body) => (typeof body.model === "string" ? body.model : null),
  hasTools: (body) => nonEmptyArray(body.tools),
  answer(reply: FakeTurnReply, context: WireContext): WireAnswer {
    const usage = fullUsage(reply.usage);
    const stopReason = (reply.toolCalls?.length ?? 0) > 0 ? "tool_use" : "end_turn";
    const wireUsage = {
      input_tokens: usage.inputUncached,
      cache_creation_input_tokens: usage.cacheWrite,
      cache_read_input_tokens: usage.cacheRead,
      output_tokens: usage.output,
    };
    const blocks = content(reply, context.sequence);
    const id = `msg_fake_${context.sequence}`;
    if (!context.stream) {
      return {
        kind: "json",
        status: 200,
        body: { id, type: "message", role: "assistant", model: context.model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage: wireUsage },
      };
    }
    const frames = [
      sseFrame(
        {
          type: "message_start",
          message: { id, type: "message", role: "assistant", model: context.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...wireUsage, output_tokens: 0 } },
        },
        "message_start",
      ),
    ];
    blocks.forEach((block, index) => {
      if (block.type === "text") {
        frames.push(sseFrame({ type: "content_block_start", index, content_block: { type: "text", text: "" } }, "content_block_start"));
        frames.push(sseFrame({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }, "content_block_delta"));
      } else {
        frames.push(sseFrame({ type: "content_block_start", index, content_block: { ...block, input: {} } }, "content_block_start"));
        frames.push(
          sseFrame({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }, "content_block_delta"),
        );
      }
      frames.push(sseFrame({ type: "content_block_stop", index }, "content_block_stop"));
    });
    frames.push(sseFrame({ type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output } }, "message_delta"));
    frames.push(sseFrame({ type: "message_stop" }, "message_stop"));
    return { kind: "sse", frames };
  },
  error(reply: FakeErrorReply): WireAnswer {
    return {
      kind: "json",
      status: reply.error.status,
      headers: errorHeaders(reply),
      body: { type: "error", error: { type: reply.error.type ?? errorType(reply.error.status), message: errorMessage(reply) } },
    };
  },
};
