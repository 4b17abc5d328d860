import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { UsageSchema, addUsage, emptyUsage, totalInputTokens, type KeelError, type Usage } from "@keel/core";
import type { Result } from "neverthrow";
import { normalizeClaudeCodeUsage } from "./claude-code/index.js";
import { normalizeCodexUsage } from "./codex/index.js";
import { normalizeCopilotUsage } from "./copilot/index.js";
import { normalizeDeepSeekUsage } from "./deepseek/index.js";
import { normalizeGeminiUsage } from "./gemini/index.js";
import { normalizeOpenCodeUsage } from "./opencode/index.js";
import { normalizePiUsage } from "./pi/index.js";

/** Every adapter's usage dialect, by backend id (each lives in its adapter's folder). */
const DIALECTS = {
  "claude-code": (raw: unknown) => normalizeClaudeCodeUsage(raw),
  qoder: (raw: unknown) => normalizeClaudeCodeUsage(raw, "qoder"),
  cursor: (raw: unknown) => normalizeClaudeCodeUsage(raw, "cursor"),
  grok: (raw: unknown) => normalizeClaudeCodeUsage(raw, "grok"),
  codex: normalizeCodexUsage,
  pi: normalizePiUsage,
  opencode: normalizeOpenCodeUsage,
  copilot: normalizeCopilotUsage,
  gemini: normalizeGeminiUsage,
  deepseek: normalizeDeepSeekUsage,
} satisfies Record<string, (raw: unknown) => Result<Usage, KeelError>>;
type UsageDialect = keyof typeof DIALECTS;
const USAGE_DIALECTS = Object.keys(DIALECTS) as UsageDialect[];
const normalizeUsage = (raw: unknown, dialect: UsageDialect) => DIALECTS[dialect](raw);

const count = fc.nat({ max: 10_000_000 });

function normalized(raw: unknown, dialect: UsageDialect): Usage {
  const result = normalizeUsage(raw, dialect);
  if (result.isErr()) throw result.error;
  return result.value;
}

describe("usage dialects mappings", () => {
  it("Claude Code: input_tokens excludes the cache, cost from the result envelope", () => {
    const result = {
      type: "result",
      total_cost_usd: 0.0332,
      usage: { input_tokens: 4, cache_creation_input_tokens: 1774, cache_read_input_tokens: 38897, output_tokens: 107 },
    };
    expect(normalized(result, "claude-code")).toEqual({
      inputUncached: 4,
      cacheRead: 38897,
      cacheWrite: 1774,
      output: 107,
      reasoning: null,
      costUsd: 0.0332,
    });
    expect(normalized(result.usage, "claude-code").costUsd).toBeNull();
  });

  it("Codex: input_tokens includes cached_input_tokens and output includes reasoning", () => {
    const usage = { input_tokens: 24763, cached_input_tokens: 24448, output_tokens: 122, reasoning_output_tokens: 22 };
    expect(normalized({ type: "turn.completed", usage }, "codex")).toEqual({
      inputUncached: 315,
      cacheRead: 24448,
      cacheWrite: null,
      output: 100,
      reasoning: 22,
      costUsd: null,
    });
  });

  it("Codex: more cached than input tokens is invalid_input", () => {
    const result = normalizeUsage({ input_tokens: 1, cached_input_tokens: 2 }, "codex");
    expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("pi: sums the per-step usage of assistant message_end events", () => {
    const step = (input: number, output: number, cost: number) => ({
      type: "message_end",
      message: { role: "assistant", usage: { input, output, cacheRead: 10, cacheWrite: 0, totalTokens: 0, cost: { total: cost } } },
    });
    expect(normalized([step(689, 18, 0.25), step(748, 11, 0.5)], "pi")).toEqual({
      inputUncached: 1437,
      cacheRead: 20,
      cacheWrite: 0,
      output: 29,
      reasoning: null,
      costUsd: 0.75,
    });
  });

  it("OpenCode: per-step tokens with cache and reasoning, cost on the part", () => {
    const stepFinish = {
      type: "step_finish",
      part: { tokens: { total: 16267, input: 14406, output: 21, reasoning: 3, cache: { write: 5, read: 1840 } }, cost: 0.5 },
    };
    expect(normalized(stepFinish, "opencode")).toEqual({
      inputUncached: 14406,
      cacheRead: 1840,
      cacheWrite: 5,
      output: 21,
      reasoning: 3,
      costUsd: 0.5,
    });
  });

  it("Copilot: output tokens only", () => {
    expect(normalized([{ type: "assistant.message", data: { outputTokens: 6 } }, { data: { outputTokens: 4 } }], "copilot")).toEqual({
      ...emptyUsage(),
      output: 10,
    });
  });

  it("Cursor: nothing documented, so nothing known", () => {
    expect(normalized({ type: "result", result: "done", session_id: "x" }, "cursor")).toEqual(emptyUsage());
  });

  it("Gemini stream-json: input_tokens = cached + input", () => {
    const stats = { total_tokens: 300, input_tokens: 250, input: 50, cached: 200, output_tokens: 50 };
    expect(normalized({ type: "result", status: "success", stats }, "gemini")).toEqual({
      inputUncached: 50,
      cacheRead: 200,
      cacheWrite: null,
      output: 50,
      reasoning: null,
      costUsd: null,
    });
    // The older shape without a cache split: the whole input is counted once, cache unknown.
    expect(normalized({ stats: { input_tokens: 50, output_tokens: 200 } }, "gemini")).toMatchObject({
      inputUncached: 50,
      cacheRead: null,
    });
  });

  it("Gemini stream-json: the thought tokens inside total_tokens are the reasoning (seen from Gemini CLI 0.61.0)", () => {
    // Billed by the fake provider: 350 input (40 cached), 12 candidates, 5 thoughts.
    const stats = { total_tokens: 367, input_tokens: 350, output_tokens: 12, cached: 40, input: 310, duration_ms: 712, tool_calls: 0 };
    expect(normalized({ type: "result", status: "success", stats }, "gemini")).toEqual({
      inputUncached: 310,
      cacheRead: 40,
      cacheWrite: null,
      output: 12,
      reasoning: 5,
      costUsd: null,
    });
  });

  it("Gemini json mode: sums stats.models[*].tokens", () => {
    const stats = {
      models: {
        a: { tokens: { prompt: 100, candidates: 10, total: 125, cached: 60, thoughts: 5, tool: 10 } },
        b: { tokens: { prompt: 20, candidates: 2, total: 22, cached: 0, thoughts: 0, tool: 0 } },
      },
    };
    expect(normalized({ response: "x", stats }, "gemini")).toEqual({
      inputUncached: 70,
      cacheRead: 60,
      cacheWrite: null,
      output: 12,
      reasoning: 5,
      costUsd: null,
    });
  });

  it("Grok Build: reasoning inside output_tokens, cost in dollars or ticks", () => {
    const end = {
      type: "end",
      usage: { input_tokens: 21415, cache_read_input_tokens: 6016, output_tokens: 28, reasoning_tokens: 23, total_tokens: 27459 },
      total_cost_usd_ticks: 126890500,
    };
    const usage = normalized(end, "grok");
    expect(usage).toEqual({ inputUncached: 21415, cacheRead: 6016, cacheWrite: null, output: 5, reasoning: 23, costUsd: 0.01268905 });
    expect(totalInputTokens(usage)! + usage.output! + usage.reasoning!).toBe(end.usage.total_tokens);
  });

  it("DeepSeek: cache hit and miss, reasoning inside completion tokens", () => {
    const body = {
      usage: {
        prompt_tokens: 100,
        completion_tokens: 40,
        prompt_cache_hit_tokens: 64,
        prompt_cache_miss_tokens: 36,
        completion_tokens_details: { reasoning_tokens: 30 },
      },
    };
    expect(normalized(body, "deepseek")).toEqual({ inputUncached: 36, cacheRead: 64, cacheWrite: null, output: 10, reasoning: 30, costUsd: null });
    expect(normalized({ usage: { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } } }, "deepseek")).toMatchObject({
      inputUncached: 6,
      cacheRead: 4,
    });
  });

  it("nothing reported is all null, never 0", () => {
    for (const dialect of USAGE_DIALECTS) {
      expect(normalized(undefined, dialect)).toEqual(emptyUsage());
      expect(normalized(null, dialect)).toEqual(emptyUsage());
      expect(normalized({}, dialect)).toEqual(emptyUsage());
    }
  });

  it("answers bad input with invalid_input", () => {
    expect(normalizeUsage("12", "codex")._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(normalizeUsage({ input_tokens: -1 }, "claude-code")._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(normalizeUsage({ input_tokens: "7" }, "claude-code")._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(normalizeUsage({ input_tokens: 1.5 }, "claude-code")._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(normalizeUsage({ total_cost_usd: Number.NaN }, "claude-code")._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(normalizeUsage([{ input: 1 }, { input: -2 }], "pi")._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

describe("usage dialects properties", () => {
  const dialect = fc.constantFrom(...USAGE_DIALECTS);

  it("never throws: any JSON gives a schema-valid usage or invalid_input", () => {
    fc.assert(
      fc.property(fc.jsonValue(), dialect, (raw, backend) => {
        const result = normalizeUsage(raw, backend);
        if (result.isOk()) expect(UsageSchema.safeParse(result.value).success).toBe(true);
        else expect(result.error.code).toBe("invalid_input");
      }),
    );
  });

  it("Claude-style total input is the sum of the three input fields", () => {
    fc.assert(
      fc.property(count, count, count, count, (input, read, write, output) => {
        const usage = normalized(
          { input_tokens: input, cache_read_input_tokens: read, cache_creation_input_tokens: write, output_tokens: output },
          "claude-code",
        );
        expect(totalInputTokens(usage)).toBe(input + read + write);
        expect(usage.output).toBe(output);
      }),
    );
  });

  it("Codex total input equals input_tokens, buckets never negative", () => {
    fc.assert(
      fc.property(count, count, count, count, (a, b, output, reasoning) => {
        const [cached, input] = a <= b ? [a, b] : [b, a];
        const usage = normalized({ input_tokens: input, cached_input_tokens: cached, output_tokens: output, reasoning_output_tokens: reasoning }, "codex");
        expect(totalInputTokens(usage)).toBe(input);
        expect(UsageSchema.safeParse(usage).success).toBe(true);
        expect(usage.output! + (reasoning <= output ? reasoning : 0)).toBe(output);
      }),
    );
  });

  it("an array of steps is the addUsage fold of its elements", () => {
    const step = fc.record({ input: count, output: count, cacheRead: count, cacheWrite: count });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 8 }), (steps) => {
        const folded = steps.map((one) => normalized(one, "pi")).reduce(addUsage, emptyUsage());
        expect(normalized(steps, "pi")).toEqual(folded);
      }),
    );
  });
});

