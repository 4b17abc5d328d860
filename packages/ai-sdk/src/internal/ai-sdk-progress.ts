import type { BackendTurnListener } from "@keel/backend";
import { streamText } from "ai";
import type { GenerateTextResult } from "./ai-sdk-result.js";
import { isRecord } from "./message-parts.js";
import { callAccesses, type ToolFileAccessRule } from "./tool-file-access.js";

/** What `streamText` resolves to, read loosely (ai 6 and 7 differ: ai 7 adds `responseMessages`). */
interface StreamedResult {
  fullStream: AsyncIterable<unknown>;
  steps: PromiseLike<GenerateTextResult["steps"]>;
  response: PromiseLike<GenerateTextResult["response"]>;
  text: PromiseLike<string>;
  responseMessages?: unknown;
}

/**
 * Runs the tool loop with `streamText` (the same arguments `generateText` takes), reporting to
 * `emit` as the stream goes: each text delta (`text`), each tool call (`tool_call`) and the file
 * access a call of a tool named in `rules` makes (`file_access`, as its call arrives: a read's
 * bytes are only in the turn's result). Resolves to the fields of a `generateText` result the
 * backend reads (`steps`, `response`, `text`, ai 7's `responseMessages`); rejects with the
 * stream's first error (the provider's `APICallError` as `generateText` would throw it).
 */
export async function streamTurn(args: Parameters<typeof streamText>[0], rules: Readonly<Record<string, ToolFileAccessRule>>, emit: BackendTurnListener): Promise<GenerateTextResult> {
  let failure: { error: unknown } | undefined;
  // onError: the error is taken from the stream below; without it the SDK logs it to the console.
  const result = streamText({ ...args, onError: () => undefined }) as unknown as StreamedResult;
  for await (const part of result.fullStream) {
    if (!isRecord(part)) continue;
    const at = Date.now();
    if (part.type === "text-delta") {
      // ai 5+ calls the delta `text`; older shapes called it `textDelta` / `delta`.
      const text = typeof part.text === "string" ? part.text : typeof part.delta === "string" ? part.delta : part.textDelta;
      if (typeof text === "string" && text !== "") emit({ type: "text", text, at });
    } else if (part.type === "tool-call" && typeof part.toolName === "string") {
      emit({ type: "tool_call", tool: part.toolName, at });
      for (const access of callAccesses(part, rules, undefined)) emit({ type: "file_access", access, at });
    } else if (part.type === "error") {
      failure ??= { error: part.error };
    }
  }
  if (failure) throw failure.error;
  const [steps, response, text] = await Promise.all([result.steps, result.response, result.text]);
  const responseMessages = await result.responseMessages;
  return { steps, response, text, ...(Array.isArray(responseMessages) ? { responseMessages } : {}) } as unknown as GenerateTextResult;
}
