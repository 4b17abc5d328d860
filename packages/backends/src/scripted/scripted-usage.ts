import type { TokenEstimator, Usage } from "@keel/core";
import type { ScriptedExchange, ScriptedReply } from "./scripted-script.js";

/** The provider model of {@link modelScriptedUsage}. */
export interface ScriptedUsageModel {
  /** Token estimator. */
  estimator: TokenEstimator;
  /** Tokens of the provider's own system prompt, charged on every call. */
  baseInputTokens: number;
  /** Report the remembered part of a resumed thread as `cacheRead`. */
  promptCache: boolean;
}

/**
 * The usage a provider reports for one successful turn — pure. The observed input is
 * `base + every earlier prompt and answer of the thread + the new prompt`; a fresh turn has no
 * history. Output defaults to the estimate of the answer, reasoning to 0, cost to unknown.
 */
export function modelScriptedUsage(
  model: ScriptedUsageModel,
  history: readonly ScriptedExchange[],
  prompt: string,
  reply: ScriptedReply,
): { usage: Usage; inputTokens: number } {
  const remembered = history.reduce((sum, exchange) => sum + model.estimator(exchange.prompt) + model.estimator(exchange.text), 0);
  const inputTokens = model.baseInputTokens + remembered + model.estimator(prompt);
  const cached = model.promptCache && history.length > 0 ? model.baseInputTokens + remembered : 0;
  return {
    inputTokens,
    usage: {
      inputUncached: inputTokens - cached,
      cacheRead: cached,
      cacheWrite: 0,
      output: reply.outputTokens ?? model.estimator(reply.text ?? ""),
      reasoning: reply.reasoningTokens ?? 0,
      costUsd: reply.costUsd ?? null,
    },
  };
}
