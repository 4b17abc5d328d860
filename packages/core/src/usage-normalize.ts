import { err, ok, type Result } from "neverthrow";
import { KeelError } from "./errors.js";
import { KEEL_BACKEND_IDS } from "./backend-ids.js";
import { emptyUsage, type Usage } from "./usage.js";

/**
 * The usage dialects {@link normalizeUsage} reads: one per backend whose CLI or API reports
 * token usage in its own shape.
 */
export const USAGE_DIALECTS = KEEL_BACKEND_IDS;

/** A backend id whose raw usage shape {@link normalizeUsage} knows. */
export type UsageDialect = (typeof USAGE_DIALECTS)[number];

type Loose = Record<string, unknown>;
type Reader = (raw: Loose, fields: FieldReader) => Result<Usage, KeelError>;

/** Reads one numeric field of a raw usage object: absent or `null` is unknown, anything else must be valid. */
interface FieldReader {
  count(source: Loose, key: string): Result<number | null, KeelError>;
  cost(source: Loose, key: string): Result<number | null, KeelError>;
}

function isLoose(value: unknown): value is Loose {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function child(source: Loose, key: string): Loose | undefined {
  const value = source[key];
  return isLoose(value) ? value : undefined;
}

function fieldReader(backendId: UsageDialect): FieldReader {
  const invalid = (key: string, value: unknown, expected: string) =>
    new KeelError("invalid_input", `${backendId} usage field "${key}" is ${JSON.stringify(value) ?? String(value)}: expected ${expected}`, {
      details: { backend: backendId, field: key },
    });
  return {
    count(source, key) {
      const value = source[key];
      if (value === undefined || value === null) return ok(null);
      if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return ok(value);
      return err(invalid(key, value, "a non-negative integer token count"));
    },
    cost(source, key) {
      const value = source[key];
      if (value === undefined || value === null) return ok(null);
      if (typeof value === "number" && Number.isFinite(value) && value >= 0) return ok(value);
      return err(invalid(key, value, "a non-negative number of US dollars"));
    },
  };
}

/** Reads several fields at once; the first invalid one wins. */
function readAll<K extends string>(
  reads: Record<K, Result<number | null, KeelError>>,
): Result<Record<K, number | null>, KeelError> {
  const out = {} as Record<K, number | null>;
  for (const key of Object.keys(reads) as K[]) {
    const result = reads[key];
    if (result.isErr()) return err(result.error);
    out[key] = result.value;
  }
  return ok(out);
}

/** `whole - part` when `part` is known and fits inside `whole`; otherwise `whole` (the part was not included). */
function withoutPart(whole: number | null, part: number | null): number | null {
  if (whole === null || part === null || part > whole) return whole;
  return whole - part;
}

/**
 * Anthropic-style usage (Claude Code, Qoder, Cursor defensively, Grok Build): `input_tokens`
 * excludes the cache, cache reads and writes are separate; `total_cost_usd` sits on the envelope.
 * Grok Build adds `reasoning_tokens`, counted inside `output_tokens` (its `total_tokens` is
 * input + cache read + output), so they are split out.
 */
const anthropicStyle: Reader = (raw, fields) => {
  const tokens = child(raw, "usage") ?? raw;
  return readAll({
    input: fields.count(tokens, "input_tokens"),
    cacheRead: fields.count(tokens, "cache_read_input_tokens"),
    cacheWrite: fields.count(tokens, "cache_creation_input_tokens"),
    output: fields.count(tokens, "output_tokens"),
    reasoning: fields.count(tokens, "reasoning_tokens"),
    cost: fields.cost(raw, "total_cost_usd"),
    ticks: fields.count(raw, "total_cost_usd_ticks"),
  }).map((read) => ({
    inputUncached: read.input,
    cacheRead: read.cacheRead,
    cacheWrite: read.cacheWrite,
    output: withoutPart(read.output, read.reasoning),
    reasoning: read.reasoning,
    // Grok Build: 1 USD = 10^10 ticks, reported when the dollar figure is not.
    costUsd: read.cost ?? (read.ticks === null ? null : read.ticks / 1e10),
  }));
};

/**
 * Codex `turn.completed.usage`: `input_tokens` includes `cached_input_tokens` (and, on builds that
 * report it, `cache_write_input_tokens`); `output_tokens` includes `reasoning_output_tokens`.
 * No cost is reported.
 */
const codex: Reader = (raw, fields) => {
  const tokens = child(raw, "usage") ?? raw;
  return readAll({
    input: fields.count(tokens, "input_tokens"),
    cached: fields.count(tokens, "cached_input_tokens"),
    cacheWrite: fields.count(tokens, "cache_write_input_tokens"),
    output: fields.count(tokens, "output_tokens"),
    reasoning: fields.count(tokens, "reasoning_output_tokens"),
  }).andThen((read) => {
    if (read.input !== null && read.cached !== null && read.cached > read.input) {
      return err(
        new KeelError("invalid_input", `codex usage reports ${read.cached} cached of only ${read.input} input tokens`, {
          details: { backend: "codex", field: "cached_input_tokens" },
        }),
      );
    }
    const uncached = withoutPart(read.input, read.cached);
    return ok({
      inputUncached: withoutPart(uncached, read.cacheWrite),
      cacheRead: read.cached,
      cacheWrite: read.cacheWrite,
      output: withoutPart(read.output, read.reasoning),
      reasoning: read.reasoning,
      costUsd: null,
    });
  });
};

/** pi `message_end` (assistant): `usage.{input (uncached), output, cacheRead, cacheWrite, cost.total}`, one step. */
const pi: Reader = (raw, fields) => {
  const message = child(raw, "message");
  const tokens = (message && child(message, "usage")) ?? child(raw, "usage") ?? raw;
  const cost = child(tokens, "cost");
  return readAll({
    input: fields.count(tokens, "input"),
    cacheRead: fields.count(tokens, "cacheRead"),
    cacheWrite: fields.count(tokens, "cacheWrite"),
    output: fields.count(tokens, "output"),
    cost: cost ? fields.cost(cost, "total") : fields.cost(tokens, "cost"),
  }).map((read) => ({
    inputUncached: read.input,
    cacheRead: read.cacheRead,
    cacheWrite: read.cacheWrite,
    output: read.output,
    reasoning: null,
    costUsd: read.cost,
  }));
};

/** OpenCode `step_finish`: `part.tokens.{input (uncached), output, reasoning, cache.read, cache.write}` + `part.cost`, one step. */
const opencode: Reader = (raw, fields) => {
  const part = child(raw, "part") ?? raw;
  const tokens = child(part, "tokens") ?? part;
  const cache = child(tokens, "cache") ?? {};
  return readAll({
    input: fields.count(tokens, "input"),
    output: fields.count(tokens, "output"),
    reasoning: fields.count(tokens, "reasoning"),
    cacheRead: fields.count(cache, "read"),
    cacheWrite: fields.count(cache, "write"),
    cost: fields.cost(part, "cost"),
  }).map((read) => ({
    inputUncached: read.input,
    cacheRead: read.cacheRead,
    cacheWrite: read.cacheWrite,
    output: read.output,
    reasoning: read.reasoning,
    costUsd: read.cost,
  }));
};

/** Copilot `assistant.message`: only `data.outputTokens` is reported in its JSONL stream. */
const copilot: Reader = (raw, fields) => {
  const data = child(raw, "data") ?? raw;
  return fields.count(data, "outputTokens").map((output) => ({ ...emptyUsage(), output }));
};

/**
 * Gemini CLI: stream-json `result.stats.{input_tokens (= cached + input), input, cached,
 * output_tokens}`, or json-mode `stats.models[model].tokens.{prompt, cached, candidates, thoughts,
 * tool}` summed over models (`tool` prompt tokens are outside `prompt`, `thoughts` outside
 * `candidates`).
 */
const gemini: Reader = (raw, fields) => {
  const stats = child(raw, "stats") ?? raw;
  const models = child(stats, "models");
  const isJsonMode = stats.input_tokens === undefined && models !== undefined;
  if (!isJsonMode) {
    return readAll({
      total: fields.count(stats, "input_tokens"),
      uncached: fields.count(stats, "input"),
      cached: fields.count(stats, "cached"),
      output: fields.count(stats, "output_tokens"),
    }).map((read) => ({
      inputUncached: read.uncached ?? withoutPart(read.total, read.cached),
      cacheRead: read.cached,
      cacheWrite: null,
      output: read.output,
      reasoning: null,
      costUsd: null,
    }));
  }
  let sum = emptyUsage();
  for (const model of Object.values(models)) {
    const tokens = isLoose(model) ? (child(model, "tokens") ?? {}) : {};
    const read = readAll({
      prompt: fields.count(tokens, "prompt"),
      cached: fields.count(tokens, "cached"),
      candidates: fields.count(tokens, "candidates"),
      thoughts: fields.count(tokens, "thoughts"),
      tool: fields.count(tokens, "tool"),
    });
    if (read.isErr()) return err(read.error);
    const { prompt, cached, candidates, thoughts, tool } = read.value;
    const uncachedPrompt = withoutPart(prompt, cached);
    const inputUncached = uncachedPrompt === null ? tool : uncachedPrompt + (tool ?? 0);
    sum = addUsage(sum, { inputUncached, cacheRead: cached, cacheWrite: null, output: candidates, reasoning: thoughts, costUsd: null });
  }
  return ok(sum);
};

/**
 * DeepSeek (OpenAI-compatible chat completions): `usage.{prompt_tokens, completion_tokens,
 * prompt_cache_hit_tokens, prompt_cache_miss_tokens, completion_tokens_details.reasoning_tokens}`
 * (or the OpenAI `prompt_tokens_details.cached_tokens`). Reasoning is inside `completion_tokens`.
 */
const deepseek: Reader = (raw, fields) => {
  const tokens = child(raw, "usage") ?? raw;
  const completionDetails = child(tokens, "completion_tokens_details") ?? {};
  const promptDetails = child(tokens, "prompt_tokens_details") ?? {};
  return readAll({
    prompt: fields.count(tokens, "prompt_tokens"),
    completion: fields.count(tokens, "completion_tokens"),
    hit: fields.count(tokens, "prompt_cache_hit_tokens"),
    miss: fields.count(tokens, "prompt_cache_miss_tokens"),
    cached: fields.count(promptDetails, "cached_tokens"),
    reasoning: fields.count(completionDetails, "reasoning_tokens"),
  }).map((read) => {
    const cacheRead = read.hit ?? read.cached;
    return {
      inputUncached: read.miss ?? withoutPart(read.prompt, cacheRead),
      cacheRead,
      cacheWrite: null,
      output: withoutPart(read.completion, read.reasoning),
      reasoning: read.reasoning,
      costUsd: null,
    };
  });
};

const READERS: Record<UsageDialect, Reader> = {
  "claude-code": anthropicStyle,
  qoder: anthropicStyle,
  cursor: anthropicStyle,
  grok: anthropicStyle,
  codex,
  pi,
  opencode,
  copilot,
  gemini,
  deepseek,
};

/**
 * Normalizes one backend's raw usage report into the disjoint core {@link Usage} buckets
 * (`inputUncached + cacheRead + cacheWrite` is the whole input; `output` excludes `reasoning`
 * when the backend reports reasoning separately). A value the backend did not report stays
 * `null`, never 0.
 *
 * `raw` is the object as the backend emits it — the event that carries the usage or the usage
 * object itself (e.g. Claude's `result` event or its `usage`, Codex's `turn.completed`, pi's
 * `message_end`, OpenCode's `step_finish`, Copilot's `assistant.message`, Gemini's `result` or
 * json output, DeepSeek's response body). Backends that report per step (pi, OpenCode, Copilot)
 * can pass an array of steps: they are summed with {@link addUsage}. `null`/`undefined` means
 * nothing was reported (all `null`).
 *
 * Mappings: Claude Code / Qoder / Grok Build `input_tokens` excludes the cache; Codex
 * `input_tokens` includes `cached_input_tokens`; Gemini `input_tokens` = `cached` + `input`;
 * Copilot reports output tokens only; Cursor documents no usage (read defensively, Claude-style).
 *
 * @returns the usage, or `invalid_input` when `backendId` is unknown, `raw` is not an object,
 * or a present field is not a non-negative number.
 */
export function normalizeUsage(raw: unknown, backendId: UsageDialect): Result<Usage, KeelError> {
  const reader = Object.hasOwn(READERS, backendId) ? READERS[backendId] : undefined;
  if (!reader) {
    return err(
      new KeelError("invalid_input", `no usage mapping for backend "${String(backendId)}": use one of ${USAGE_DIALECTS.join(", ")}`, {
        details: { backend: String(backendId) },
      }),
    );
  }
  if (raw === undefined || raw === null) return ok(emptyUsage());
  const fields = fieldReader(backendId);
  if (Array.isArray(raw)) {
    let sum = emptyUsage();
    for (const step of raw) {
      const normalized = normalizeUsage(step, backendId);
      if (normalized.isErr()) return normalized;
      sum = addUsage(sum, normalized.value);
    }
    return ok(sum);
  }
  if (!isLoose(raw)) {
    return err(
      new KeelError("invalid_input", `${backendId} usage must be an object or an array of objects, got ${typeof raw}`, {
        details: { backend: backendId },
      }),
    );
  }
  return reader(raw, fields);
}

function addKnown(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return a + b;
}

/**
 * Sums two usages bucket by bucket: unknown plus unknown stays unknown (`null`), unknown plus a
 * number is that number. Used to add the steps of one turn, or the turns of a thread.
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
