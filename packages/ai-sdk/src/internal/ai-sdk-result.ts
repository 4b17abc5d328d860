import type { generateText, ModelMessage } from "ai";

/** What `generateText` resolves to. */
export type GenerateTextResult = Awaited<ReturnType<typeof generateText>>;

/**
 * The messages of every step of a call, by feature: ai 7's `responseMessages`, else ai 6's
 * `response.messages`. Why not `response.messages` always: in ai 7 it holds only the last step's
 * messages, and storing it silently drops the turn's tool calls and results.
 */
export function responseMessagesOf(result: Pick<GenerateTextResult, "response">): ModelMessage[] {
  const all = (result as { responseMessages?: unknown }).responseMessages;
  return (Array.isArray(all) ? all : result.response.messages) as ModelMessage[];
}

/** The turn's text: the non-empty texts of its steps in order (not only the last step's, as `result.text` gives). */
export function turnText(result: Pick<GenerateTextResult, "steps" | "text">): string {
  const texts = result.steps.map((step) => step.text).filter((text) => text.trim() !== "");
  return texts.length > 0 ? texts.join("\n\n") : result.text;
}
