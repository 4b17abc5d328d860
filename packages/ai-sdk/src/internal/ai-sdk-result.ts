import type { generateText } from "ai";

/** What `generateText` resolves to. */
export type GenerateTextResult = Awaited<ReturnType<typeof generateText>>;

/** The turn's text: the non-empty texts of its steps in order (not only the last step's, as `result.text` gives). */
export function turnText(result: Pick<GenerateTextResult, "steps" | "text">): string {
  const texts = result.steps.map((step) => step.text).filter((text) => text.trim() !== "");
  return texts.length > 0 ? texts.join("\n\n") : result.text;
}
