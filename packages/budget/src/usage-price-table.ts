import { KeelError, UsageSchema, validate, validateOrThrow, type Usage } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";

/**
 * List prices of one model in US dollars per million tokens (which is the same number as
 * micro-dollars per token). Each price records where it came from.
 */
export interface ModelPrice {
  /** The model id as backends report it, e.g. `claude-sonnet-4-5`; dated snapshots (`…-20250929`) match too. */
  model: string;
  /** Other ids of the same model. */
  aliases?: string[];
  /** Uncached input. */
  inputUsdPerMTok: number;
  /** Output (reasoning included unless priced apart). */
  outputUsdPerMTok: number;
  /** Input read from the prompt cache; `null` when unknown. */
  cacheReadUsdPerMTok: number | null;
  /** Input written to the prompt cache; `0` when not billed, `null` when unknown. */
  cacheWriteUsdPerMTok: number | null;
  /** Reasoning tokens reported apart from output; default the output price. */
  reasoningUsdPerMTok?: number;
  /** Where the price comes from (a URL and the date it was read). */
  source: string;
}

/** The price-table port: a catalogue adapter (tokenlens, models.dev, a host's contract prices) implements it. */
export interface PriceTable {
  /** The price of a model, or `undefined` when it is not priced. */
  lookup(model: string): ModelPrice | undefined;
}

/**
 * How a usage was priced:
 * - `reported` — the backend reported the cost (`usage.costUsd`);
 * - `priced` — every billed bucket was known and priced by the table;
 * - `partial` — a bucket with a non-zero price was unknown: `costUsd` is only a lower bound;
 * - `unpriced` — no model, or the table has no price for it: `costUsd` is `null`.
 */
export type CostBasis = "reported" | "priced" | "partial" | "unpriced";

/** The cost of one usage. */
export interface PricedUsage {
  /** Cost in US dollars; `null` when unpriced. A lower bound when `basis` is `partial`. */
  costUsd: number | null;
  /** Cost in micro-dollars, rounded up; `null` unless `basis` is `reported` or `priced`. */
  costMicroUsd: number | null;
  basis: CostBasis;
  /** The price's source (`backend` for a reported cost), or `null` when unpriced. */
  source: string | null;
  /** True when the cost is not fully known (`partial` or `unpriced`): a host should not trust it as spend. */
  flagged: boolean;
  /** The unknown buckets that made a cost `partial`. */
  unknownBuckets: string[];
}

const Price = z.number().nonnegative().finite();
const ModelPriceSchema = z.strictObject({
  model: z.string().min(1).max(200),
  aliases: z.array(z.string().min(1).max(200)).max(20).optional(),
  inputUsdPerMTok: Price,
  outputUsdPerMTok: Price,
  cacheReadUsdPerMTok: Price.nullable(),
  cacheWriteUsdPerMTok: Price.nullable(),
  reasoningUsdPerMTok: Price.optional(),
  source: z.string().min(1).max(500),
});

const ANTHROPIC = "https://platform.claude.com/docs/en/about-claude/pricing (list price; cache writes at the 5-minute rate)";
const OPENAI = "https://platform.openai.com/docs/pricing (standard tier; cache writes not billed)";

/**
 * A small default price table of common coding-agent models. Prices change: pass your own
 * {@link PriceTable} (or {@link createPriceTable}) for billing-grade numbers.
 */
export const DEFAULT_PRICES: readonly ModelPrice[] = Object.freeze([
  { model: "claude-opus-4-6", aliases: ["claude-opus-4.6"], inputUsdPerMTok: 5, outputUsdPerMTok: 25, cacheReadUsdPerMTok: 0.5, cacheWriteUsdPerMTok: 6.25, source: ANTHROPIC },
  { model: "claude-opus-4-5", aliases: ["claude-opus-4.5"], inputUsdPerMTok: 5, outputUsdPerMTok: 25, cacheReadUsdPerMTok: 0.5, cacheWriteUsdPerMTok: 6.25, source: ANTHROPIC },
  { model: "claude-opus-4-1", aliases: ["claude-opus-4.1"], inputUsdPerMTok: 15, outputUsdPerMTok: 75, cacheReadUsdPerMTok: 1.5, cacheWriteUsdPerMTok: 18.75, source: ANTHROPIC },
  { model: "claude-sonnet-4-5", aliases: ["claude-sonnet-4.5"], inputUsdPerMTok: 3, outputUsdPerMTok: 15, cacheReadUsdPerMTok: 0.3, cacheWriteUsdPerMTok: 3.75, source: ANTHROPIC },
  { model: "claude-sonnet-4", inputUsdPerMTok: 3, outputUsdPerMTok: 15, cacheReadUsdPerMTok: 0.3, cacheWriteUsdPerMTok: 3.75, source: ANTHROPIC },
  { model: "claude-haiku-4-5", aliases: ["claude-haiku-4.5"], inputUsdPerMTok: 1, outputUsdPerMTok: 5, cacheReadUsdPerMTok: 0.1, cacheWriteUsdPerMTok: 1.25, source: ANTHROPIC },
  { model: "gpt-5", inputUsdPerMTok: 1.25, outputUsdPerMTok: 10, cacheReadUsdPerMTok: 0.125, cacheWriteUsdPerMTok: 0, source: OPENAI },
  { model: "gpt-5-codex", inputUsdPerMTok: 1.25, outputUsdPerMTok: 10, cacheReadUsdPerMTok: 0.125, cacheWriteUsdPerMTok: 0, source: OPENAI },
  { model: "gpt-5-mini", inputUsdPerMTok: 0.25, outputUsdPerMTok: 2, cacheReadUsdPerMTok: 0.025, cacheWriteUsdPerMTok: 0, source: OPENAI },
] satisfies ModelPrice[]);

/** A dated model snapshot: `-20250929`, `@20250929` or `-2025-08-07`. */
const DATE_SUFFIX = /^(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$/;

/**
 * Creates a {@link PriceTable} from prices. A model matches its id or an alias (case-insensitive),
 * a dated snapshot of it (`<id>-20250929`, `<id>@20250929`, `<id>-2025-08-07`) and a
 * provider-qualified id (`anthropic/<id>`). Anything else is unpriced: no guessing (a newer
 * `claude-sonnet-4-6` is not priced as `claude-sonnet-4`).
 *
 * @throws KeelError `invalid_input` for a malformed price (negative, missing source) or an id listed twice.
 */
export function createPriceTable(prices: readonly ModelPrice[]): PriceTable {
  const valid = validateOrThrow(z.array(ModelPriceSchema).max(10_000), prices, "price table") as ModelPrice[];
  const byId = new Map<string, ModelPrice>();
  for (const price of valid) {
    for (const id of [price.model, ...(price.aliases ?? [])]) {
      const key = id.toLowerCase();
      if (byId.has(key)) {
        throw new KeelError("invalid_input", `invalid price table: model id "${id}" is listed twice`, {
          details: { what: "price table", model: id },
        });
      }
      byId.set(key, Object.freeze({ ...price }));
    }
  }
  const ids = [...byId.keys()].sort((a, b) => b.length - a.length);
  const find = (model: string): ModelPrice | undefined => {
    const exact = byId.get(model);
    if (exact) return exact;
    const id = ids.find((candidate) => model.startsWith(candidate) && DATE_SUFFIX.test(model.slice(candidate.length)));
    return id === undefined ? undefined : byId.get(id);
  };
  return Object.freeze({
    lookup(model: string): ModelPrice | undefined {
      if (typeof model !== "string" || model.length === 0) return undefined;
      const lower = model.toLowerCase();
      const slash = lower.lastIndexOf("/");
      return find(lower) ?? (slash >= 0 ? find(lower.slice(slash + 1)) : undefined);
    },
  });
}

/** The table of {@link DEFAULT_PRICES}. */
export const defaultPriceTable: PriceTable = createPriceTable(DEFAULT_PRICES);

/**
 * Prices one normalized usage. A cost the backend reported wins (`reported`). Otherwise the model
 * is looked up: an unpriced model gives cost `null`, flagged (`unpriced`); an unknown bucket with
 * a non-zero price makes the cost a flagged lower bound (`partial`). Unknown reasoning is taken
 * to be inside output (as `Usage` defines it).
 *
 * @returns the cost, or `invalid_input` for a malformed usage.
 */
export function priceUsage(usage: Usage, model: string | null, table: PriceTable = defaultPriceTable): Result<PricedUsage, KeelError> {
  return validate(UsageSchema, usage, "usage").map((valid): PricedUsage => {
    if (valid.costUsd !== null) {
      return { costUsd: valid.costUsd, costMicroUsd: toMicroUsd(valid.costUsd * 1e6), basis: "reported", source: "backend", flagged: false, unknownBuckets: [] };
    }
    const price = model === null ? undefined : table.lookup(model);
    if (!price) return { costUsd: null, costMicroUsd: null, basis: "unpriced", source: null, flagged: true, unknownBuckets: [] };
    const buckets: [string, number | null, number | null][] = [
      ["inputUncached", valid.inputUncached, price.inputUsdPerMTok],
      ["cacheRead", valid.cacheRead, price.cacheReadUsdPerMTok],
      ["cacheWrite", valid.cacheWrite, price.cacheWriteUsdPerMTok],
      ["output", valid.output, price.outputUsdPerMTok],
    ];
    if (valid.reasoning !== null) buckets.push(["reasoning", valid.reasoning, price.reasoningUsdPerMTok ?? price.outputUsdPerMTok]);
    let micro = 0;
    const unknownBuckets: string[] = [];
    for (const [name, tokens, perToken] of buckets) {
      if (perToken === 0) continue;
      if (tokens === null || perToken === null) {
        if (tokens !== 0) unknownBuckets.push(name);
        continue;
      }
      micro += tokens * perToken;
    }
    const partial = unknownBuckets.length > 0;
    return {
      costUsd: micro / 1e6,
      costMicroUsd: partial ? null : toMicroUsd(micro),
      basis: partial ? "partial" : "priced",
      source: price.source,
      flagged: partial,
      unknownBuckets,
    };
  });
}

/** Micro-dollars rounded up, ignoring float noise below a millionth of a micro-dollar. */
function toMicroUsd(micro: number): number {
  return Math.ceil(micro - 1e-6);
}
