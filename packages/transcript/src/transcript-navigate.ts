import { estimateTokens, type JsonValue, KeelError, type TokenEstimator, toKeelError, validate } from "@keel/core";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { z } from "zod";
import { compactionMessage, type ContextMessage, entryToContextMessage } from "./context-build.js";
import { createFileTracker, formatFileOperations } from "./compaction-files.js";
import { guarded, runHook, TranscriptHooksSchema } from "./compaction-compact.js";
import { checkedEstimator, estimateMessageTokens } from "./compaction-tokens.js";
import { type BranchSummaryEntry, EntryIdSchema, type TranscriptEntry, type TranscriptEntryInput } from "./entry-schema.js";
import { type Summarizer, summarize } from "./summarizer.js";
import { buildSummaryPrompt } from "./summary-prompt.js";
import type { TranscriptHooks } from "./transcript-hooks.js";
import type { Transcript } from "./transcript-open.js";

/** The text before a branch summary's body (pi's wording). */
export const BRANCH_SUMMARY_PREAMBLE = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/** Options of {@link Transcript.navigate}. */
export interface NavigateOptions {
  /** Summarize the abandoned branch and attach the summary at the target; without, nothing of it is injected. */
  summarize?: Summarizer;
  customInstructions?: string;
  hooks?: TranscriptHooks;
  estimator?: TokenEstimator;
  /** The most tokens of the abandoned branch sent to the summarizer, newest first (default 100,000). */
  maxInputTokens?: number;
  /** The longest branch summary, in tokens (default 2,048). */
  maxSummaryTokens?: number;
  /** The working directory of the file lists. */
  cwd?: string;
}

const NavigateOptionsSchema = z.strictObject({
  summarize: z.custom<Summarizer>((value) => typeof value === "function", "summarize must be a function").optional(),
  customInstructions: z.string().optional(),
  hooks: TranscriptHooksSchema.optional(),
  estimator: z.custom<TokenEstimator>((value) => typeof value === "function", "estimator must be a function").optional(),
  maxInputTokens: z.number().int().positive().optional(),
  maxSummaryTokens: z.number().int().positive().optional(),
  cwd: z.string().optional(),
});

/** What a navigation did. */
export interface NavigationResult {
  /** The leaf now: the target, or the branch summary attached to it. */
  leafId: string;
  /** The branch summary written, if any. */
  branchSummary: BranchSummaryEntry | undefined;
  /** The entries left behind, oldest first. */
  abandonedEntryIds: string[];
}

/** The entries from below the deepest common ancestor of `fromId` and `targetId` up to `fromId`, oldest first. */
export function abandonedBranch(transcript: Transcript, fromId: string | null, targetId: string): TranscriptEntry[] {
  if (fromId === null) return [];
  const targetPath = transcript.path(targetId);
  if (targetPath.isErr()) return [];
  const onTarget = new Set(targetPath.value.map((entry) => entry.id));
  const abandoned: TranscriptEntry[] = [];
  let current = transcript.tree().get(fromId);
  while (current && !onTarget.has(current.id)) {
    abandoned.push(current);
    current = current.parentId === null ? undefined : transcript.tree().get(current.parentId);
  }
  return abandoned.reverse();
}

function messagesWithin(entries: readonly TranscriptEntry[], budget: number, estimator: TokenEstimator): ContextMessage[] {
  const chosen: ContextMessage[] = [];
  let used = 0;
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as TranscriptEntry;
    const message = entry.type === "compaction" ? compactionMessage(entry as never) : entryToContextMessage(entry);
    if (!message) continue;
    const cost = estimateMessageTokens(message, estimator);
    if (used + cost > budget) break;
    used += cost;
    chosen.push(message);
  }
  return chosen.reverse();
}

/**
 * Moves the leaf to `targetId`. With `summarize`, the branch left behind (from below the common
 * ancestor to the old leaf) is summarized with Keel's branch prompt and a `branch_summary` is
 * appended as a child of the target (the new leaf); without, the leaf just moves and nothing of
 * the abandoned branch reaches the context. Entries are never changed. The `beforeNavigation`
 * hook may cancel (`aborted`) or supply the summary. Emits `transcript.navigated`. A target that
 * is not an entry id, options that are not a strict {@link NavigateOptions} object or an
 * estimator that throws is `invalid_input` (`not_found` for an id not in the tree): nothing moves.
 */
export function navigateTranscript(transcript: Transcript, targetId: string, options: NavigateOptions = {}): ResultAsync<NavigationResult, KeelError> {
  const checked = validate(EntryIdSchema, targetId, "navigation target (an entry id)").andThen(() => validate(NavigateOptionsSchema, options, "navigate options"));
  if (checked.isErr()) return errAsync(checked.error);
  if (!transcript.tree().get(targetId)) {
    return errAsync(new KeelError("not_found", `entry "${targetId}" is not in transcript "${transcript.sessionId}": navigate to an existing entry`, { details: { entryId: targetId } }));
  }
  return guarded(() => navigateChecked(transcript, targetId, options), "the token estimator failed");
}

function navigateChecked(transcript: Transcript, targetId: string, options: NavigateOptions): ResultAsync<NavigationResult, KeelError> {
  const estimator = checkedEstimator(options.estimator ?? estimateTokens);
  const fromId = transcript.leafId();
  const abandoned = abandonedBranch(transcript, fromId, targetId);
  const abandonedEntryIds = abandoned.map((entry) => entry.id);
  const emit = (result: NavigationResult): NavigationResult => {
    transcript.events?.emit({ type: "transcript.navigated", sessionId: transcript.sessionId, entryIds: [fromId ?? "", targetId, ...(result.branchSummary ? [result.branchSummary.id] : [])] });
    return result;
  };
  return runHook(options.hooks?.beforeNavigation, { sessionId: transcript.sessionId, fromId, targetId, abandoned, customInstructions: options.customInstructions }).andThen((decision) => {
    if (decision.action === "cancel") {
      return errAsync(new KeelError("aborted", `a beforeNavigation hook cancelled the navigation${decision.reason ? `: ${decision.reason}` : ""}`, { details: { reason: decision.reason ?? "" } }));
    }
    const wantsSummary = abandoned.length > 0 && (decision.action === "supply" || options.summarize !== undefined);
    if (!wantsSummary) return transcript.setLeaf(targetId).map(() => emit({ leafId: targetId, branchSummary: undefined, abandonedEntryIds }));
    const tracker = createFileTracker(options.cwd);
    for (const entry of abandoned) tracker.add(entry);
    const files = tracker.result();
    const body: ResultAsync<{ text: string; source: "hook" | "summarizer"; usage: unknown }, KeelError> =
      decision.action === "supply"
        ? okAsync({ text: decision.summary, source: "hook", usage: undefined })
        : (() => {
            let messages: ContextMessage[];
            try {
              messages = messagesWithin(abandoned, options.maxInputTokens ?? 100_000, estimator);
            } catch (error) {
              return errAsync(toKeelError(error, "invalid_input", "the token estimator failed"));
            }
            const instructions = options.customInstructions === undefined ? {} : { customInstructions: options.customInstructions };
            return summarize(options.summarize as Summarizer, {
              kind: "branch",
              prompt: buildSummaryPrompt({ kind: "branch", messages, files, ...instructions }),
              maxTokens: options.maxSummaryTokens ?? 2048,
              messages,
              ...instructions,
            }).map((answer) => ({ text: answer.text, source: "summarizer" as const, usage: answer.usage }));
          })();
    return body.andThen((summary) =>
      transcript.setLeaf(targetId).andThen(() => {
        const input: TranscriptEntryInput = {
          type: "branch_summary",
          fromId: fromId as string,
          summary: BRANCH_SUMMARY_PREAMBLE + summary.text + formatFileOperations(files),
          details: { readFiles: files.readFiles, modifiedFiles: files.modifiedFiles },
          source: summary.source,
        };
        if (summary.usage) input.summarizerUsage = summary.usage as JsonValue;
        return transcript.append(input).map((entry) => emit({ leafId: entry.id, branchSummary: entry as BranchSummaryEntry, abandonedEntryIds }));
      }),
    );
  });
}
