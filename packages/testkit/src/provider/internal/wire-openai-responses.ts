// OpenAI Responses: `POST …/responses` (Codex). Named SSE events with a sequence number; a tool
// call is a `function_call` output item; usage arrives once, in `response.completed`.
import { fullUsage, type FakeTurnReply } from "../provider-script.js";
import { nonEmptyArray, sseFrame, toolCallId, type WireAnswer, type WireContext, type WireFormat } from "./wire-format.js";
import { openAiError } from "./wire-openai-chat.js";

type Item = Record<string, unknown> & { type: string; id: string };

function outputItems(reply: FakeTurnReply, sequence: number): Item[] {
  const items: Item[] = [];
  if (reply.text !== undefined) {
    items.push({
      type: "message",
      id: `msg_fake_${sequence}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reply.text, annotations: [] }],
    });
  }
  (reply.toolCalls ?? []).forEach((call, index) =>
    items.push({
      type: "function_call",
      id: `fc_fake_${sequence}_${index}`,
      call_id: toolCallId("call_", sequence, index, call.id),
      name: call.name,
      arguments: JSON.stringify(call.arguments),
      status: "completed",
    }),
  );
  return items;
}

export const openAiResponses: WireFormat = {
  format: "openai-responses",
  matches: (path) => /(^|\/)responses$/.test(path),
  streaming: (_path, _query, body) => body.stream === true,
  model: (_path, body) => (typeof body.model === "string" ? body.model : null),
  hasTools: (body) => nonEmptyArray(body.tools),
  answer(reply: FakeTurnReply, context: WireContext): WireAnswer {
    const usage = fullUsage(reply.usage);
    const input = usage.inputUncached + usage.cacheRead + usage.cacheWrite;
    const wireUsage = {
      input_tokens: input,
      input_tokens_details: { cached_tokens: usage.cacheRead },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: usage.reasoning },
      total_tokens: input + usage.output,
    };
    const items = outputItems(reply, context.sequence);
    const response = (status: string, output: Item[], withUsage: boolean) => ({
      id: `resp_fake_${context.sequence}`,
      object: "response",
      created_at: 1_700_000_000,
      status,
      model: context.model,
      output,
      usage: withUsage ? wireUsage : null,
    });
    if (!context.stream) return { kind: "json", status: 200, body: response("completed", items, true) };

    let sequenceNumber = 0;
    const frames: string[] = [];
    const emit = (type: string, fields: Record<string, unknown>) => frames.push(sseFrame({ type, sequence_number: sequenceNumber++, ...fields }, type));
    emit("response.created", { response: response("in_progress", [], false) });
    emit("response.in_progress", { response: response("in_progress", [], false) });
    items.forEach((item, outputIndex) => {
      if (item.type === "message") {
        const text = (item.content as { text: string }[])[0]?.text ?? "";
        const part = { type: "output_text", text: "", annotations: [] };
        const where = { item_id: item.id, output_index: outputIndex, content_index: 0 };
        emit("response.output_item.added", { output_index: outputIndex, item: { ...item, status: "in_progress", content: [] } });
        emit("response.content_part.added", { ...where, part });
        emit("response.output_text.delta", { ...where, delta: text });
        emit("response.output_text.done", { ...where, text });
        emit("response.content_part.done", { ...where, part: { ...part, text } });
      } else {
        const where = { item_id: item.id, output_index: outputIndex };
        emit("response.output_item.added", { output_index: outputIndex, item: { ...item, status: "in_progress", arguments: "" } });
        emit("response.function_call_arguments.delta", { ...where, delta: item.arguments });
        emit("response.function_call_arguments.done", { ...where, arguments: item.arguments });
      }
      emit("response.output_item.done", { output_index: outputIndex, item });
    });
    emit("response.completed", { response: response("completed", items, true) });
    return { kind: "sse", frames };
  },
  error: openAiError,
};
