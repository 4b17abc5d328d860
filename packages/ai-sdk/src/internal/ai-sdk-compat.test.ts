import { describe, expect, it } from "vitest";
import { responseMessagesOf } from "../model-messages.js";
import { stepUsage, turnUsage } from "./ai-sdk-usage.js";

describe("AI SDK 6 and 7 results", () => {
  const call = { role: "assistant", content: [{ type: "tool-call", toolCallId: "c", toolName: "read", input: {} }] };
  const result = { role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "read", output: { type: "text", value: "x" } }] };
  const answer = { role: "assistant", content: [{ type: "text", text: "done" }] };

  it("takes ai 7's responseMessages (every step), not its response.messages (the last step)", () => {
    const ai7 = { responseMessages: [call, result, answer], response: { messages: [answer] } };
    expect(responseMessagesOf(ai7 as never)._unsafeUnwrap()).toEqual([call, result, answer]);
  });

  it("takes ai 6's response.messages, which holds every step", () => {
    const ai6 = { response: { messages: [call, result, answer] } };
    expect(responseMessagesOf(ai6 as never)._unsafeUnwrap()).toEqual([call, result, answer]);
  });

  it("answers a result with neither as invalid_input", () => {
    for (const bad of [undefined, {}, { response: {} }, { responseMessages: "x", response: { messages: 1 } }]) {
      expect(responseMessagesOf(bad as never)._unsafeUnwrapErr().code, JSON.stringify(bad)).toBe("invalid_input");
    }
  });

  it("maps an OpenAI step (cache inside the input, reasoning inside the output) to disjoint buckets", () => {
    const usage = { inputTokens: 600, inputTokenDetails: { noCacheTokens: 400, cacheReadTokens: 200, cacheWriteTokens: undefined }, outputTokens: 20, outputTokenDetails: { textTokens: 15, reasoningTokens: 5 }, totalTokens: 620 };
    expect(stepUsage(usage)).toEqual({ inputUncached: 400, cacheRead: 200, cacheWrite: null, output: 15, reasoning: 5, costUsd: null });
  });

  it("maps an Anthropic step (cache writes apart, no reasoning split)", () => {
    const usage = { inputTokens: 830, inputTokenDetails: { noCacheTokens: 600, cacheReadTokens: 200, cacheWriteTokens: 30 }, outputTokens: 9, outputTokenDetails: { textTokens: undefined, reasoningTokens: undefined } };
    expect(stepUsage(usage)).toEqual({ inputUncached: 600, cacheRead: 200, cacheWrite: 30, output: 9, reasoning: null, costUsd: null });
  });

  it("reads ai 6's deprecated fields when the details are missing, and leaves unknown buckets null", () => {
    expect(stepUsage({ inputTokens: 100, cachedInputTokens: 40, outputTokens: 10, reasoningTokens: 4 })).toEqual({ inputUncached: 60, cacheRead: 40, cacheWrite: null, output: 6, reasoning: 4, costUsd: null });
    expect(stepUsage({ inputTokens: undefined, inputTokenDetails: {}, outputTokens: undefined, outputTokenDetails: {} })).toEqual({ inputUncached: null, cacheRead: null, cacheWrite: null, output: null, reasoning: null, costUsd: null });
    expect(stepUsage(undefined).output).toBeNull();
  });

  it("sums the steps of a turn, unknown plus known being the known", () => {
    const steps = [{ usage: { inputTokens: 10, outputTokens: 1 } }, { usage: { inputTokens: 20, inputTokenDetails: { cacheReadTokens: 5 }, outputTokens: 2 } }];
    expect(turnUsage(steps)).toEqual({ inputUncached: 25, cacheRead: 5, cacheWrite: null, output: 3, reasoning: null, costUsd: null });
    expect(turnUsage([]).inputUncached).toBeNull();
  });
});
