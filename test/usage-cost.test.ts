// Cross-package: each adapter's usage dialect (@keel/backends) priced by @keel/budget, on real
// recorded CLI output. (Moved from packages/budget/test when the dialects left @keel/core.)
import { readFileSync } from "node:fs";
import path from "node:path";
import { normalizeClaudeCodeUsage } from "@keel/backends/claude-code";
import { normalizeCodexUsage } from "@keel/backends/codex";
import { normalizeCopilotUsage } from "@keel/backends/copilot";
import { actualsFromUsage, priceUsage } from "@keel/budget";
import type { Usage } from "@keel/core";
import { describe, expect, it } from "vitest";
import { sharedFixtures } from "./support/shared-fixtures.js";

const samples = sharedFixtures("cli");

const cli = (name: string) => readFileSync(path.join(samples.dir, name), "utf8");
const lines = (name: string) =>
  cli(name)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe.skipIf(!samples.available)("usage and cost on real CLI output", () => {
  it("prices Claude Code's usage as Claude Code itself did", () => {
    const raw = JSON.parse(cli("claude-code.output-format-json.json")) as { total_cost_usd: number; modelUsage: Record<string, unknown> };
    const usage = normalizeClaudeCodeUsage(raw)._unsafeUnwrap();
    expect(usage.costUsd).toBe(raw.total_cost_usd);
    const reported = priceUsage(usage, "claude-opus-4-6")._unsafeUnwrap();
    expect(reported).toMatchObject({ basis: "reported", source: "backend", flagged: false });
    const model = Object.keys(raw.modelUsage)[0]!;
    const priced = priceUsage({ ...usage, costUsd: null }, model)._unsafeUnwrap();
    expect(priced.basis).toBe("priced");
    expect(priced.source).toContain("claude.com");
    expect(priced.costUsd).toBeCloseTo(raw.total_cost_usd, 9);
    expect(priced.costMicroUsd).toBe(Math.ceil(raw.total_cost_usd * 1e6 - 1e-6));
  });

  it("counts Codex's cache-inclusive input once and prices it (cache writes are not billed)", () => {
    const completed = lines("codex-exec.json.jsonl").find((event) => event["type"] === "turn.completed")!;
    const raw = (completed["usage"] as Record<string, number>)!;
    const usage = normalizeCodexUsage(completed)._unsafeUnwrap();
    const { actual, cost } = actualsFromUsage(usage, { model: "gpt-5-codex" })._unsafeUnwrap();
    expect(actual.tokens).toBe(raw["input_tokens"]! + raw["output_tokens"]!);
    expect(cost).toMatchObject({ basis: "priced", flagged: false });
    const expected = (raw["input_tokens"]! - raw["cached_input_tokens"]!) * 1.25 + raw["cached_input_tokens"]! * 0.125 + raw["output_tokens"]! * 10;
    expect(actual.costMicroUsd).toBe(Math.ceil(expected - 1e-6));
  });

  it("flags Copilot's output-only usage as a partial cost and keeps the cost reservation", () => {
    const messages = lines("copilot-cli.output-format-json.jsonl").filter((event) => event["type"] === "assistant.message");
    const usage = normalizeCopilotUsage(messages)._unsafeUnwrap();
    expect(usage.inputUncached).toBeNull();
    const { actual, cost } = actualsFromUsage(usage, { model: "claude-opus-4.6" })._unsafeUnwrap();
    expect(cost).toMatchObject({ basis: "partial", flagged: true });
    expect(cost?.unknownBuckets).toEqual(expect.arrayContaining(["inputUncached", "cacheRead", "cacheWrite"]));
    expect(actual.costMicroUsd).toBeNull();
    expect(actual.tokens).toBe(usage.output);
  });

  it("leaves Cursor's undocumented usage unknown: no tokens, no cost, flagged", () => {
    const result = lines("cursor-agent.stream-json.jsonl").find((event) => event["type"] === "result");
    const usage: Usage = normalizeClaudeCodeUsage(result?.["usage"] ?? null, "cursor")._unsafeUnwrap();
    const { actual, cost } = actualsFromUsage(usage, { model: "Claude 4 Sonnet" })._unsafeUnwrap();
    expect(actual).toEqual({ tokens: null, timeMs: null, costMicroUsd: null });
    expect(cost).toMatchObject({ basis: "unpriced", costUsd: null, flagged: true });
  });
});
