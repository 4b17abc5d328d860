import { validate } from "@keel/core";
import type { KeelError } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";

/** One item of diagnostic history: any object with a `text` (other fields are kept). */
export interface AgentHistoryItem {
  text: string;
  [field: string]: unknown;
}

/** Options of {@link compactAgentHistory}. */
export interface AgentHistoryLimits {
  /** Keep at most this many items, the newest (default 40). */
  maxEntries?: number;
  /** Cut each text to at most this many characters, keeping its end (default 2,000). */
  maxTextChars?: number;
  /** Keep items, newest first, while their texts total at most this (default 20,000). */
  maxTotalChars?: number;
}

/** What {@link compactAgentHistory} kept. */
export interface CompactedAgentHistory<T extends AgentHistoryItem> {
  /** The items kept, oldest first, texts cut. */
  items: T[];
  /** How many items were left out (the oldest). */
  omitted: number;
  /** How many kept texts were cut. */
  truncated: number;
}

const LimitsSchema = z.strictObject({
  maxEntries: z.number().int().positive().optional(),
  maxTextChars: z.number().int().positive().optional(),
  maxTotalChars: z.number().int().positive().optional(),
});
const ItemsSchema = z.array(z.looseObject({ text: z.string() }));

/** The mark that starts a text cut from its start: one character, for display (not `@keel/core`'s stored-text marker). */
const CUT_MARK = "…";

/**
 * Bounds a diagnostic history for display (never for the model's context): the newest items
 * are kept first, each text is cut from its start (the end of an output says most), and items
 * stop when the total would pass `maxTotalChars`. Defaults: 40 items, 2,000 characters a text,
 * 20,000 in all. Pure; `invalid_input` for items without a text or bad limits.
 *
 * @example
 * ```ts
 * const { items, omitted } = compactAgentHistory(history)._unsafeUnwrap();
 * ```
 */
export function compactAgentHistory<T extends AgentHistoryItem>(items: readonly T[], limits: AgentHistoryLimits = {}): Result<CompactedAgentHistory<T>, KeelError> {
  return validate(LimitsSchema, limits, "agent history limits").andThen(() =>
    validate(ItemsSchema, items, "agent history items").map(() => {
      const maxEntries = limits.maxEntries ?? 40;
      const maxTextChars = limits.maxTextChars ?? 2000;
      const maxTotalChars = limits.maxTotalChars ?? 20000;
      const kept: T[] = [];
      let total = 0;
      let truncated = 0;
      for (let index = items.length - 1; index >= 0 && kept.length < maxEntries; index--) {
        const item = items[index] as T;
        const cut = item.text.length > maxTextChars;
        const text = cut ? CUT_MARK + item.text.slice(item.text.length - (maxTextChars - CUT_MARK.length)) : item.text;
        if (total + text.length > maxTotalChars) break;
        total += text.length;
        if (cut) truncated++;
        kept.push(text === item.text ? item : { ...item, text });
      }
      return { items: kept.reverse(), omitted: items.length - kept.length, truncated };
    }),
  );
}
