import { estimateTokens, KeelError, type TokenEstimator, toKeelError, validate } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { type ContextMessage, entryToContextMessage } from "./context-build.js";
import type { AssistantMessage, CompactionEntry, ToolResultMessage, TranscriptEntry } from "./entry-schema.js";
import { createFileTracker, type FileOperations } from "./compaction-files.js";
import { checkedEstimator, estimateEntryTokens } from "./compaction-tokens.js";
import { readEntries } from "./entry-parse.js";

/** Options of {@link planCompaction}. */
export interface PlanCompactionOptions {
  /** Keep at least about this many tokens of the newest context verbatim. */
  keepRecentTokens: number;
  /** The headroom kept for the summary: the history summary may use 80% of it, a turn prefix 50%. */
  reserveTokens: number;
  /** Estimates tokens of a text (default Keel's conservative `estimateTokens`). */
  estimator?: TokenEstimator;
  /** The working directory file paths are made relative to in the file lists. */
  cwd?: string;
}

/** The options of {@link planCompaction}, strict (an unknown option is refused); `Transcript.compact` extends them. */
export const PlanCompactionOptionsSchema = z.strictObject({
  keepRecentTokens: z.number().int().nonnegative(),
  reserveTokens: z.number().int().nonnegative(),
  estimator: z.custom<TokenEstimator>((value) => typeof value === "function", "estimator must be a function").optional(),
  cwd: z.string().optional(),
});

/** A part of the path to summarize: the entries and the messages they contribute. */
export interface CompactionSpan {
  entryIds: string[];
  messages: ContextMessage[];
}

/** What {@link planCompaction} decided: plain data, given to `compact`. */
export interface CompactionPlan {
  /** The leaf the plan was made for: the compaction is appended after it. */
  leafId: string;
  /** The first entry kept verbatim (always a legal cut: never between a tool call and its result). */
  firstKeptEntryId: string;
  /** True when the cut falls inside a turn: the turn's start is summarized apart as its prefix. */
  isSplitTurn: boolean;
  /** The entry that starts the split turn, or `null`. */
  turnStartEntryId: string | null;
  /** The history to summarize (before the turn prefix, or before the cut). */
  history: CompactionSpan;
  /** The split turn's part before the cut (empty unless `isSplitTurn`). */
  turnPrefix: CompactionSpan;
  /** The summary of the previous compaction on the path, carried into the new one. */
  previousSummary: string | null;
  /** The previous compaction's id, or `null`. */
  previousCompactionId: string | null;
  /** Files read and modified over everything summarized so far (previous summaries included). */
  files: FileOperations;
  /** Estimated tokens of the context now. */
  tokensBefore: number;
  /** Estimated tokens of what stays verbatim. */
  keptTokens: number;
  /** Token limit of the history summary (80% of `reserveTokens`). */
  summaryMaxTokens: number;
  /** Token limit of the turn prefix summary (50% of `reserveTokens`). */
  turnPrefixMaxTokens: number;
}

const SpanSchema = z.looseObject({ entryIds: z.array(z.string()), messages: z.array(z.looseObject({ role: z.string() })) });

/** The zod schema of a {@link CompactionPlan} (what `compact` checks before it asks anything). */
export const CompactionPlanSchema = z.looseObject({
  leafId: z.string().min(1),
  firstKeptEntryId: z.string().min(1),
  isSplitTurn: z.boolean(),
  turnStartEntryId: z.string().nullable(),
  history: SpanSchema,
  turnPrefix: SpanSchema,
  previousSummary: z.string().nullable(),
  previousCompactionId: z.string().nullable(),
  files: z.looseObject({ readFiles: z.array(z.string()), modifiedFiles: z.array(z.string()) }),
  tokensBefore: z.number().nonnegative(),
  keptTokens: z.number().nonnegative(),
  summaryMaxTokens: z.number().int().nonnegative(),
  turnPrefixMaxTokens: z.number().int().nonnegative(),
});

/** True for an entry that starts a turn: a user message, a user shell command, an extension's or host's message, a branch summary (false for anything that is not an entry, never a throw). */
export function isTurnStart(entry: TranscriptEntry): boolean {
  if (typeof entry !== "object" || entry === null) return false;
  try {
    if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
    if (entry.type !== "message") return false;
    const role = (entry["message"] as { role?: unknown } | null | undefined)?.role;
    return role === "user" || role === "bashExecution" || role === "custom";
  } catch {
    // A proxy or a getter whose read throws is no entry.
    return false;
  }
}

/** True for an entry a cut may fall on, tool pairs aside: any message but a tool result, a custom message, a branch summary. */
function isCutCandidate(entry: TranscriptEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  if (entry.type !== "message") return false;
  const role = (entry["message"] as { role: string }).role;
  return role === "user" || role === "assistant" || role === "bashExecution" || role === "custom";
}

/**
 * For each index of `path` from `start`, whether a cut there would separate a tool call from its
 * result: true inside every span (call, result]. One pass with a difference array.
 */
export function toolPairBlocks(path: readonly TranscriptEntry[], start: number): boolean[] {
  const difference = new Array<number>(path.length + 1).fill(0);
  const callAt = new Map<string, number>();
  for (let index = start; index < path.length; index++) {
    const entry = path[index] as TranscriptEntry;
    if (entry.type !== "message") continue;
    const message = entry["message"] as AssistantMessage | ToolResultMessage;
    if (message.role === "assistant") {
      for (const block of message.content) if (block.type === "toolCall" && typeof block["id"] === "string") callAt.set(block["id"], index);
    } else if (message.role === "toolResult") {
      const call = callAt.get(message.toolCallId);
      if (call !== undefined && call < index) {
        (difference[call + 1] as number) += 1;
        (difference[index + 1] as number) -= 1;
      }
    }
  }
  const blocked = new Array<boolean>(path.length).fill(false);
  let open = 0;
  for (let index = 0; index < path.length; index++) {
    open += difference[index] as number;
    blocked[index] = open > 0;
  }
  return blocked;
}

function span(path: readonly TranscriptEntry[], from: number, to: number, skip: number): CompactionSpan {
  const result: CompactionSpan = { entryIds: [], messages: [] };
  for (let index = from; index < to; index++) {
    if (index === skip) continue;
    const entry = path[index] as TranscriptEntry;
    const message = entryToContextMessage(entry);
    if (!message) continue;
    result.entryIds.push(entry.id);
    result.messages.push(message);
  }
  return result;
}

/**
 * Decides a compaction of a root-to-leaf path, or `null` when there is nothing to summarize.
 *
 * 1. The region: from the previous compaction's first kept entry (so what it kept is summarized
 *    or kept again, never lost) to the leaf; the previous summary is carried forward.
 * 2. Walk back from the newest entry adding the estimated tokens of every entry that reaches the
 *    model (messages, `custom_message`, `branch_summary`, images at a fixed cost) until
 *    `keepRecentTokens` is reached; `null` when the whole region fits.
 * 3. Cut at the first legal entry at or after that point (a message other than a tool result, a
 *    custom message or a branch summary, never inside a tool call's (call, result] span); when
 *    none follows, at the last legal entry before it.
 * 4. A cut on an entry that does not start a turn splits that turn: its start up to the cut is
 *    summarized apart. The decision is made on the entry at the cut, never on metadata near it.
 * 5. Files read and modified: every tool's calls in what is summarized, and earlier summaries' lists.
 *
 * `null` also when the cut would leave nothing to summarize or the last entry is a compaction.
 */
export function planCompaction(path: readonly TranscriptEntry[], options: PlanCompactionOptions): Result<CompactionPlan | null, KeelError> {
  const checked = validate(PlanCompactionOptionsSchema, options, "compaction options");
  if (checked.isErr()) return checked.map(() => null);
  // The path read once: what is planned is what was checked.
  const entries = readEntries(path, "planCompaction path (the array of entries from the root to the leaf: transcript.path())");
  if (entries.isErr()) return err(entries.error);
  try {
    return planChecked(entries.value, options, checkedEstimator(options.estimator ?? estimateTokens));
  } catch (error) {
    return err(toKeelError(error, "invalid_input", "the token estimator failed"));
  }
}

function planChecked(path: readonly TranscriptEntry[], options: PlanCompactionOptions, estimator: TokenEstimator): Result<CompactionPlan | null, KeelError> {
  const last = path[path.length - 1];
  if (!last || last.type === "compaction") return ok(null);
  let previousIndex = -1;
  for (let index = path.length - 1; index >= 0; index--) {
    if ((path[index] as TranscriptEntry).type === "compaction") {
      previousIndex = index;
      break;
    }
  }
  const previous = previousIndex >= 0 ? (path[previousIndex] as CompactionEntry) : undefined;
  let start = previousIndex + 1;
  if (previous) {
    for (let index = 0; index < previousIndex; index++) {
      if ((path[index] as TranscriptEntry).id === previous.firstKeptEntryId) {
        start = index;
        break;
      }
    }
  }
  const tokens = new Array<number>(path.length).fill(0);
  let regionTokens = 0;
  for (let index = start; index < path.length; index++) {
    if (index === previousIndex) continue;
    tokens[index] = estimateEntryTokens(path[index] as TranscriptEntry, estimator);
    regionTokens += tokens[index] as number;
  }
  const blocked = toolPairBlocks(path, start);
  const legal = (index: number): boolean => index !== previousIndex && !blocked[index] && isCutCandidate(path[index] as TranscriptEntry);

  let crossing = -1;
  let accumulated = 0;
  for (let index = path.length - 1; index >= start; index--) {
    accumulated += tokens[index] as number;
    if (accumulated >= options.keepRecentTokens && (tokens[index] as number) > 0) {
      crossing = index;
      break;
    }
  }
  if (crossing < 0) return ok(null);
  let cut = -1;
  for (let index = crossing; index < path.length; index++) {
    if (legal(index)) {
      cut = index;
      break;
    }
  }
  if (cut < 0) {
    for (let index = crossing - 1; index > start; index--) {
      if (legal(index)) {
        cut = index;
        break;
      }
    }
  }
  if (cut <= start) return ok(null);

  const cutEntry = path[cut] as TranscriptEntry;
  let turnStart = -1;
  if (!isTurnStart(cutEntry)) {
    for (let index = cut - 1; index >= start; index--) {
      if (index !== previousIndex && isTurnStart(path[index] as TranscriptEntry)) {
        turnStart = index;
        break;
      }
    }
  }
  const isSplitTurn = turnStart >= 0;
  const history = span(path, start, isSplitTurn ? turnStart : cut, previousIndex);
  const turnPrefix = isSplitTurn ? span(path, turnStart, cut, previousIndex) : { entryIds: [], messages: [] };
  if (history.messages.length === 0 && turnPrefix.messages.length === 0) return ok(null);

  const tracker = createFileTracker(options.cwd);
  if (previous && previous.source !== "hook") tracker.addLists(previous.details);
  for (let index = start; index < cut; index++) if (index !== previousIndex) tracker.add(path[index] as TranscriptEntry);
  let keptTokens = 0;
  for (let index = cut; index < path.length; index++) keptTokens += tokens[index] as number;
  const previousSummaryTokens = previous ? estimateEntryTokens(previous, estimator) : 0;
  return ok({
    leafId: last.id,
    firstKeptEntryId: cutEntry.id,
    isSplitTurn,
    turnStartEntryId: isSplitTurn ? (path[turnStart] as TranscriptEntry).id : null,
    history,
    turnPrefix,
    previousSummary: previous ? previous.summary : null,
    previousCompactionId: previous ? previous.id : null,
    files: tracker.result(),
    tokensBefore: regionTokens + previousSummaryTokens,
    keptTokens,
    summaryMaxTokens: Math.floor(0.8 * options.reserveTokens),
    turnPrefixMaxTokens: Math.floor(0.5 * options.reserveTokens),
  });
}
