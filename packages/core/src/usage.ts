import { z } from "zod";

/**
 * Token usage and cost of one model call, normalized across providers. The token buckets are
 * disjoint: `inputUncached + cacheRead + cacheWrite` is the whole input. A value the provider did
 * not report is `null`, never 0.
 */
export interface Usage {
  /** Input tokens neither read from nor written to the prompt cache. */
  inputUncached: number | null;
  /** Input tokens read from the prompt cache. */
  cacheRead: number | null;
  /** Input tokens written to the prompt cache. */
  cacheWrite: number | null;
  /** Output tokens (including reasoning when the provider does not split it out). */
  output: number | null;
  /** Reasoning tokens, when reported separately. */
  reasoning: number | null;
  /** Cost in US dollars as reported or priced, or `null` when unknown. */
  costUsd: number | null;
}

const count = z.number().int().nonnegative().nullable();

/** zod schema of {@link Usage}. */
export const UsageSchema = z.strictObject({
  inputUncached: count,
  cacheRead: count,
  cacheWrite: count,
  output: count,
  reasoning: count,
  costUsd: z.number().nonnegative().nullable(),
});

/** A usage with every field unknown. */
export function emptyUsage(): Usage {
  return { inputUncached: null, cacheRead: null, cacheWrite: null, output: null, reasoning: null, costUsd: null };
}

/**
 * Total input tokens (`inputUncached + cacheRead + cacheWrite`), or `null` when none of them is
 * known. Unknown buckets count as 0 only when at least one is known.
 */
export function totalInputTokens(usage: Usage | null | undefined): number | null {
  if (!usage) return null;
  const parts = [usage.inputUncached, usage.cacheRead, usage.cacheWrite];
  if (parts.every((part) => part === null)) return null;
  return parts.reduce<number>((sum, part) => sum + (part ?? 0), 0);
}

function addKnown(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return a + b;
}

/**
 * Sums two usages bucket by bucket: unknown plus unknown stays unknown (`null`), unknown plus a
 * number is that number. Used to add the steps of one turn, or the turns of a thread.
 * (Each backend adapter maps its CLI's own usage shape to {@link Usage}; the kernel knows none.)
 */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputUncached: addKnown(a.inputUncached, b.inputUncached),
    cacheRead: addKnown(a.cacheRead, b.cacheRead),
    cacheWrite: addKnown(a.cacheWrite, b.cacheWrite),
    output: addKnown(a.output, b.output),
    reasoning: addKnown(a.reasoning, b.reasoning),
    costUsd: addKnown(a.costUsd, b.costUsd),
  };
}
