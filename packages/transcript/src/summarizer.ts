import { KeelError, toKeelError, type Usage, UsageSchema, addUsage } from "@keel/core";
import { err, ok, type Result, ResultAsync } from "neverthrow";
import type { ContextMessage } from "./context-build.js";
import { REQUIRED_SECTIONS, SUMMARY_SYSTEM_PROMPT, type SummaryKind } from "./summary-prompt.js";

/** One summary call, as Keel asks the host's summarizer for it. */
export interface SummaryRequest {
  kind: SummaryKind;
  /** The system prompt ({@link SUMMARY_SYSTEM_PROMPT}). */
  systemPrompt: string;
  /** The user prompt, built by `buildSummaryPrompt` (the conversation, previous summary, format, instructions). */
  prompt: string;
  /** The longest summary wanted, in tokens. */
  maxTokens: number;
  /** The messages summarized, for a summarizer that builds its own request. */
  messages: readonly ContextMessage[];
  /** The host's custom instructions (already in `prompt`), given to every call. */
  customInstructions?: string;
}

/** What the summarizer answers. */
export interface SummaryResponse {
  /** The summary text (markdown with the requested sections). */
  text: string;
  /** What the call cost, when known (recorded on the entry). */
  usage?: Usage;
}

/**
 * The summarizer port: the host's model call. It may answer a promise (a throw or rejection is
 * `backend_failed`) or a `ResultAsync`.
 */
export type Summarizer = (request: SummaryRequest) => Promise<SummaryResponse> | ResultAsync<SummaryResponse, KeelError>;

/** Checks a summary: not empty, and with the headings its kind requires. `invalid_input` with `details.reason` otherwise (and for a kind that is not a {@link SummaryKind}). */
export function checkSummary(kind: SummaryKind, text: unknown): Result<string, KeelError> {
  if (typeof kind !== "string" || !Object.hasOwn(REQUIRED_SECTIONS, kind)) {
    return err(new KeelError("invalid_input", `summary kind ${typeof kind === "string" ? JSON.stringify(kind.slice(0, 40)) : typeof kind} is not one of ${Object.keys(REQUIRED_SECTIONS).join(", ")}`));
  }
  if (typeof text !== "string" || text.trim() === "") {
    return err(new KeelError("invalid_input", `the summarizer answered an empty ${kind} summary: nothing was written`, { details: { kind, reason: "empty" } }));
  }
  const missing = REQUIRED_SECTIONS[kind].filter((heading) => !text.includes(heading));
  if (missing.length > 0) {
    return err(
      new KeelError("invalid_input", `the ${kind} summary lacks ${missing.join(", ")}: nothing was written (ask for the format of buildSummaryPrompt)`, {
        details: { kind, reason: "malformed", missing },
      }),
    );
  }
  return ok(text.trim());
}

/** Calls the summarizer and checks its answer. */
export function summarize(summarizer: Summarizer, request: Omit<SummaryRequest, "systemPrompt">): ResultAsync<{ text: string; usage: Usage | undefined }, KeelError> {
  const full: SummaryRequest = { ...request, systemPrompt: SUMMARY_SYSTEM_PROMPT };
  const call = ResultAsync.fromThrowable(
    async (input: SummaryRequest) => summarizer(input),
    (error) => toKeelError(error, "backend_failed", "the summarizer failed"),
  );
  return call(full)
    .andThen((answer): Result<SummaryResponse, KeelError> => {
      // Awaiting a ResultAsync answer (a thenable) leaves its Result.
      const result = answer as unknown as Result<SummaryResponse, KeelError>;
      if (typeof result === "object" && result !== null && typeof result.isErr === "function") return result;
      return ok(answer as SummaryResponse);
    })
    .andThen((answer) => {
      if (typeof answer !== "object" || answer === null) return err(new KeelError("invalid_input", "the summarizer answered no object: answer { text, usage? }", { details: { kind: request.kind, reason: "malformed" } }));
      if (answer.usage !== undefined && !UsageSchema.safeParse(answer.usage).success) {
        return err(new KeelError("invalid_input", "the summarizer's usage is not a Keel Usage", { details: { kind: request.kind, reason: "malformed" } }));
      }
      const usage: Usage | undefined = answer.usage;
      return checkSummary(request.kind, answer.text).map((text) => ({ text, usage }));
    });
}

/** Adds usages, `undefined` when none is known. */
export function sumUsage(usages: readonly (Usage | undefined)[]): Usage | undefined {
  let total: Usage | undefined;
  for (const usage of usages) {
    if (!usage) continue;
    total = total ? addUsage(total, usage) : usage;
  }
  return total;
}
