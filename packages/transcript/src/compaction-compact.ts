import { estimateTokens, type JsonValue, KeelError, type TokenEstimator, toKeelError, type Usage, validate } from "@keel/core";
import { err, errAsync, ok, okAsync, type Result, ResultAsync } from "neverthrow";
import { z } from "zod";
import { COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX } from "./context-build.js";
import { formatFileOperations } from "./compaction-files.js";
import { type CompactionPlan, CompactionPlanSchema, planCompaction, type PlanCompactionOptions, PlanCompactionOptionsSchema } from "./compaction-plan.js";
import { checkedEstimator } from "./compaction-tokens.js";
import type { CompactionEntry, TranscriptEntryInput } from "./entry-schema.js";
import { type Summarizer, summarize, sumUsage } from "./summarizer.js";
import { buildSummaryPrompt } from "./summary-prompt.js";
import type { HookDecision, TranscriptHooks } from "./transcript-hooks.js";
import type { Transcript } from "./transcript-open.js";

/** Options of {@link compact}. */
export interface CompactOptions {
  /** The host's instructions, passed to every summary call. */
  customInstructions?: string;
  /** Estimates the tokens after (default Keel's `estimateTokens`; use the plan's estimator). */
  estimator?: TokenEstimator;
}

const functionSchema = <T>(what: string) => z.custom<T>((value) => typeof value === "function", `${what} must be a function`);

/** The `hooks` option of compaction and navigation, strict. */
export const TranscriptHooksSchema = z.strictObject({
  beforeCompaction: functionSchema<NonNullable<TranscriptHooks["beforeCompaction"]>>("beforeCompaction").optional(),
  beforeNavigation: functionSchema<NonNullable<TranscriptHooks["beforeNavigation"]>>("beforeNavigation").optional(),
});

const CompactOptionsSchema = z.strictObject({
  customInstructions: z.string().optional(),
  estimator: functionSchema<TokenEstimator>("estimator").optional(),
});

const CompactTranscriptOptionsSchema = PlanCompactionOptionsSchema.extend({
  summarizer: functionSchema<Summarizer>("summarizer"),
  customInstructions: z.string().optional(),
  hooks: TranscriptHooksSchema.optional(),
});

/** Runs `work`, turning a throw (a host's estimator, a getter) into a refused result. */
export function guarded<T>(work: () => ResultAsync<T, KeelError>, what: string): ResultAsync<T, KeelError> {
  try {
    return work();
  } catch (error) {
    return errAsync(toKeelError(error, "invalid_input", what));
  }
}

/** The compaction entry {@link compact} makes, ready to append. */
export type CompactionInput = Extract<TranscriptEntryInput, { type: "compaction" }>;

function entryFor(plan: CompactionPlan, summaryBody: string, estimator: TokenEstimator, source: "summarizer" | "hook", usage: Usage | undefined): ResultAsync<CompactionInput, KeelError> {
  const summary = summaryBody + formatFileOperations(plan.files);
  let tokensAfter: number;
  try {
    tokensAfter = estimator(COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX) + plan.keptTokens;
  } catch (error) {
    return errAsync(toKeelError(error, "invalid_input", "the token estimator failed"));
  }
  if (tokensAfter >= plan.tokensBefore) {
    return errAsync(
      new KeelError("invalid_input", `the compaction would not shrink the context (${plan.tokensBefore} tokens before, ${tokensAfter} after): nothing was written`, {
        details: { reason: "not_smaller", tokensBefore: plan.tokensBefore, tokensAfter },
      }),
    );
  }
  const entry: CompactionInput = {
    type: "compaction",
    summary,
    firstKeptEntryId: plan.firstKeptEntryId,
    tokensBefore: plan.tokensBefore,
    tokensAfter,
    details: { readFiles: plan.files.readFiles, modifiedFiles: plan.files.modifiedFiles },
    source,
  };
  if (usage) entry.summarizerUsage = usage as unknown as JsonValue;
  return okAsync(entry);
}

/**
 * Summarizes a plan through the host's summarizer with Keel's prompts and answers the compaction
 * entry to append: the history summary (folding in the previous summary) and, for a split turn,
 * the turn prefix summary, asked in parallel, each with the custom instructions; then the file
 * lists. Refused (nothing to append): an empty or malformed summary (`invalid_input`,
 * `details.reason` `empty`/`malformed`), a compaction that would not shrink the context
 * (`not_smaller`), a failed summarizer (`backend_failed`). The entry records tokens before and
 * after and the summarizer's usage.
 */
export function compact(plan: CompactionPlan, summarizer: Summarizer, options: CompactOptions = {}): ResultAsync<CompactionInput, KeelError> {
  if (typeof summarizer !== "function") return errAsync(new KeelError("invalid_input", "compact needs a summarizer function"));
  const checked = validate(CompactionPlanSchema, plan, "compaction plan").andThen(() => validate(CompactOptionsSchema, options, "compact options"));
  if (checked.isErr()) return errAsync(checked.error);
  return guarded(() => compactChecked(plan, summarizer, options), "the token estimator failed");
}

function compactChecked(plan: CompactionPlan, summarizer: Summarizer, options: CompactOptions): ResultAsync<CompactionInput, KeelError> {
  const estimator = checkedEstimator(options.estimator ?? estimateTokens);
  const instructions = options.customInstructions === undefined ? {} : { customInstructions: options.customInstructions };
  const history =
    plan.history.messages.length > 0
      ? summarize(summarizer, {
          kind: "history",
          prompt: buildSummaryPrompt({ kind: "history", messages: plan.history.messages, previousSummary: plan.previousSummary, files: plan.files, ...instructions }),
          maxTokens: plan.summaryMaxTokens,
          messages: plan.history.messages,
          ...instructions,
        })
      : okAsync({ text: plan.previousSummary ?? "No prior history.", usage: undefined as Usage | undefined });
  const prefix = plan.isSplitTurn
    ? summarize(summarizer, {
        kind: "turn_prefix",
        prompt: buildSummaryPrompt({ kind: "turn_prefix", messages: plan.turnPrefix.messages, ...instructions }),
        maxTokens: plan.turnPrefixMaxTokens,
        messages: plan.turnPrefix.messages,
        ...instructions,
      })
    : okAsync(undefined);
  return ResultAsync.combine([history, prefix] as const).andThen(([historySummary, prefixSummary]) => {
    const body = prefixSummary ? `${historySummary.text}\n\n---\n\n**Turn Context (split turn):**\n\n${prefixSummary.text}` : historySummary.text;
    return entryFor(plan, body, estimator, "summarizer", sumUsage([historySummary.usage, prefixSummary?.usage]));
  });
}

/** Options of {@link Transcript.compact}. */
export interface CompactTranscriptOptions extends PlanCompactionOptions {
  summarizer: Summarizer;
  customInstructions?: string;
  hooks?: TranscriptHooks;
}

/** Runs a hook, turning a throw into `invalid_input` (a hook is the host's code). */
export function runHook<E>(hook: ((event: E) => HookDecision | undefined | Promise<HookDecision | undefined>) | undefined, event: E): ResultAsync<HookDecision, KeelError> {
  if (!hook) return okAsync({ action: "continue" });
  return ResultAsync.fromThrowable(
    async (input: E) => hook(input),
    (error) => toKeelError(error, "invalid_input", "a transcript hook failed"),
  )(event).andThen((decision) => {
    if (decision === undefined) return ok({ action: "continue" } as HookDecision);
    if (typeof decision !== "object" || decision === null || !["continue", "cancel", "supply"].includes((decision as HookDecision).action)) {
      return err(new KeelError("invalid_input", "a hook answered something that is not a HookDecision ({ action: continue | cancel | supply })"));
    }
    if (decision.action === "supply" && (typeof decision.summary !== "string" || decision.summary.trim() === "")) {
      return err(new KeelError("invalid_input", "a hook supplied an empty summary: nothing was written", { details: { reason: "empty" } }));
    }
    return ok(decision);
  });
}

/**
 * Plans, summarizes and appends a compaction at the transcript's leaf; `null` when there is
 * nothing to summarize. The options are strict ({@link PlanCompactionOptions} and `summarizer`,
 * `customInstructions`, `hooks`): `null`, an unknown option, a field of the wrong type or an
 * estimator that throws or answers no count is `invalid_input`, and nothing is appended. The `beforeCompaction` hook may cancel (`aborted`) or supply the summary.
 * Emits `transcript.compacted` after the entry is written.
 */
export function compactTranscript(transcript: Transcript, options: CompactTranscriptOptions): ResultAsync<CompactionEntry | null, KeelError> {
  const checked: Result<unknown, KeelError> = validate(CompactTranscriptOptionsSchema, options, "compaction options");
  if (checked.isErr()) return errAsync(checked.error);
  return guarded(() => compactTranscriptChecked(transcript, options), "the token estimator failed");
}

function compactTranscriptChecked(transcript: Transcript, options: CompactTranscriptOptions): ResultAsync<CompactionEntry | null, KeelError> {
  const { summarizer, customInstructions, hooks, ...planOptions } = options;
  const path = transcript.path();
  if (path.isErr()) return errAsync(path.error);
  const planned = planCompaction(path.value, planOptions);
  if (planned.isErr()) return errAsync(planned.error);
  const plan = planned.value;
  if (!plan) return okAsync(null);
  const estimator = checkedEstimator(planOptions.estimator ?? estimateTokens);
  return runHook(hooks?.beforeCompaction, { sessionId: transcript.sessionId, plan, customInstructions })
    .andThen((decision): ResultAsync<CompactionInput, KeelError> => {
      if (decision.action === "cancel") {
        return errAsync(new KeelError("aborted", `a beforeCompaction hook cancelled the compaction${decision.reason ? `: ${decision.reason}` : ""}`, { details: { reason: decision.reason ?? "" } }));
      }
      if (decision.action === "supply") return entryFor(plan, decision.summary, estimator, "hook", undefined);
      return compact(plan, summarizer, { estimator, ...(customInstructions === undefined ? {} : { customInstructions }) });
    })
    .andThen((input) => {
      if (transcript.leafId() !== plan.leafId) {
        return errAsync(new KeelError("conflict", "the leaf moved while the compaction was summarized: plan again", { details: { plannedLeaf: plan.leafId } }));
      }
      return transcript.append(input);
    })
    .map((entry) => {
      transcript.events?.emit({
        type: "transcript.compacted",
        sessionId: transcript.sessionId,
        entryIds: [entry.id, plan.firstKeptEntryId],
        tokensBefore: plan.tokensBefore,
        tokensAfter: entry["tokensAfter"] as number,
      });
      return entry as CompactionEntry;
    });
}
