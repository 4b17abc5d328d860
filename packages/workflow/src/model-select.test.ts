import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { tierRank } from "./definition-schemas.js";
import { selectModel, type Model } from "./index.js";
import { ModelSchema, TIERS, type RoutingRole, type Tier } from "./schemas.js";

const model = (id: string, extra: Partial<Model> = {}): Model =>
  ModelSchema.parse({ id, strength: 50, contextWindow: 100_000, location: "installed", tier: "medium", ...extra });
const role = (extra: Partial<RoutingRole> = {}): RoutingRole => ({ id: "reviewer", minimumStrength: 0, minimumContext: 0, capabilities: [], tier: "maximum", ...extra });
const input = { preference: "balanced" as const, promptBytes: 3000, outputBytes: 3000 };

describe("selectModel: gates", () => {
  const models = [model("small", { strength: 30, tier: "light" }), model("mid", { strength: 60, tier: "medium" }), model("big", { strength: 90, tier: "large", location: "remote" })];

  it("never picks above the tier cap: an unmet minimum refuses, naming the gate and the values, rather than raising the cap", () => {
    const refused = selectModel({ ...input, models, role: role({ minimumStrength: 80 }), tierCap: "medium" });
    expect(refused).toMatchObject({ kind: "refused", gate: "tier", details: { cap: "medium" } });
    const strength = selectModel({ ...input, models, role: role({ minimumStrength: 99 }) });
    expect(strength).toMatchObject({ kind: "refused", gate: "strength", details: { required: 99, best: 90 } });
  });

  it("the role's tier is a ceiling too, and the lower of role and host caps wins", () => {
    const choice = selectModel({ ...input, models, role: role({ tier: "light" }), tierCap: "large" });
    expect(choice).toMatchObject({ kind: "selected", model: { id: "small" }, tierCap: "light" });
  });

  it("an explicit allowlist is never widened by other installed models", () => {
    const refused = selectModel({ ...input, models, role: role({ minimumStrength: 50 }), allowedModels: ["small"] });
    expect(refused).toMatchObject({ kind: "refused", gate: "allowlist" });
    const allowed = selectModel({ ...input, models, role: role(), allowedModels: ["big"] });
    expect(allowed).toMatchObject({ kind: "selected", model: { id: "big" }, candidates: ["big"] });
  });

  it("checks role models, context minimum and capabilities", () => {
    expect(selectModel({ ...input, models, role: role({ models: ["nope"] }) })).toMatchObject({ kind: "refused", gate: "role_models" });
    expect(selectModel({ ...input, models, role: role({ minimumContext: 500_000 }) })).toMatchObject({ kind: "refused", gate: "context" });
    expect(selectModel({ ...input, models, role: role(), capabilities: ["vision"] })).toMatchObject({ kind: "refused", gate: "capabilities", details: { required: ["vision"] } });
  });

  it("escalation goes only to strictly stronger models: no same-model retry", () => {
    const retry = selectModel({ ...input, models, role: role(), previousStrengths: [60] });
    expect(retry).toMatchObject({ kind: "selected", model: { id: "big" } });
    expect(selectModel({ ...input, models, role: role(), previousStrengths: [90] })).toMatchObject({ kind: "refused", gate: "escalation" });
  });

  it("refuses before the call what does not fit the context window by a conservative UTF-8 estimate", () => {
    const tiny = [model("tiny", { contextWindow: 2000 })];
    expect(selectModel({ ...input, models: tiny, role: role(), promptBytes: 4501, outputBytes: 1500 })).toMatchObject({ kind: "refused", gate: "context_fit", details: { estimatedTokens: 2001 } });
    expect(selectModel({ ...input, models: tiny, role: role(), promptBytes: 4500, outputBytes: 1500 })).toMatchObject({ kind: "selected", estimatedTokens: 2000 });
  });

  it("orders by preference: balanced prefers installed and fast, quality prefers reviewed and strong", () => {
    const pool = [model("fast-local", { strength: 40, latencyMs: 100 }), model("slow-local", { strength: 70, latencyMs: 900 }), model("remote", { strength: 95, location: "remote", reviewed: true, tier: "large" })];
    expect(selectModel({ ...input, models: pool, role: role() })).toMatchObject({ candidates: ["fast-local", "slow-local", "remote"] });
    expect(selectModel({ ...input, preference: "quality", models: pool, role: role() })).toMatchObject({ candidates: ["remote", "slow-local", "fast-local"] });
  });
});

const arbitraryModel = fc.record({
  id: fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h"),
  strength: fc.integer({ min: 0, max: 100 }),
  contextWindow: fc.integer({ min: 1000, max: 300_000 }),
  capabilities: fc.subarray(["code", "vision", "tools"]),
  location: fc.constantFrom("installed" as const, "remote" as const),
  latencyMs: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined }),
  reviewed: fc.boolean(),
  tier: fc.constantFrom(...TIERS),
});
const arbitraryInput = fc.record({
  models: fc.uniqueArray(arbitraryModel, { selector: (entry) => entry.id, maxLength: 8 }).map((list) => list.map((entry) => ModelSchema.parse(entry))),
  role: fc.record({
    id: fc.constant("r"),
    minimumStrength: fc.integer({ min: 0, max: 100 }),
    minimumContext: fc.integer({ min: 0, max: 200_000 }),
    capabilities: fc.subarray(["code", "vision"]),
    tier: fc.constantFrom(...TIERS),
  }),
  tierCap: fc.option(fc.constantFrom(...TIERS), { nil: undefined }),
  allowedModels: fc.option(fc.subarray(["a", "b", "c", "d", "x"]), { nil: undefined }),
  preference: fc.constantFrom("balanced" as const, "quality" as const),
  promptBytes: fc.integer({ min: 0, max: 600_000 }),
  outputBytes: fc.integer({ min: 0, max: 60_000 }),
  previousStrengths: fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 3 }),
});

describe("selectModel: properties", () => {
  it("a selected model passes every gate: never above the cap, never outside the allowlist, never weaker on escalation, always fits", () => {
    fc.assert(
      fc.property(arbitraryInput, (value) => {
        const choice = selectModel(value);
        if (choice.kind === "refused") return;
        const cap: Tier = value.tierCap && tierRank(value.tierCap) < tierRank(value.role.tier) ? value.tierCap : value.role.tier;
        for (const id of choice.candidates) {
          const candidate = value.models.find((entry) => entry.id === id)!;
          expect(tierRank(candidate.tier)).toBeLessThanOrEqual(tierRank(cap));
          if (value.allowedModels) expect(value.allowedModels).toContain(id);
          expect(candidate.strength).toBeGreaterThan(Math.max(-1, ...value.previousStrengths));
          expect(candidate.strength).toBeGreaterThanOrEqual(value.role.minimumStrength);
          expect(candidate.contextWindow).toBeGreaterThanOrEqual(Math.ceil(value.promptBytes / 3) + Math.ceil(value.outputBytes / 3));
          for (const capability of value.role.capabilities) expect(candidate.capabilities).toContain(capability);
        }
        expect(choice.model.id).toBe(choice.candidates[0]);
      }),
      { numRuns: 500 },
    );
  });

  it("refuses only when no model passes every gate, and lowering the cap never adds candidates", () => {
    fc.assert(
      fc.property(arbitraryInput, fc.constantFrom(...TIERS), (value, lower) => {
        const choice = selectModel(value);
        const passing = value.models.filter((entry) => {
          const cap: Tier = value.tierCap && tierRank(value.tierCap) < tierRank(value.role.tier) ? value.tierCap : value.role.tier;
          return (
            entry.strength >= value.role.minimumStrength &&
            entry.contextWindow >= value.role.minimumContext &&
            value.role.capabilities.every((capability) => entry.capabilities.includes(capability)) &&
            tierRank(entry.tier) <= tierRank(cap) &&
            (!value.allowedModels || value.allowedModels.includes(entry.id)) &&
            entry.strength > Math.max(-1, ...value.previousStrengths) &&
            Math.ceil(value.promptBytes / 3) + Math.ceil(value.outputBytes / 3) <= entry.contextWindow
          );
        });
        expect(choice.kind === "selected" ? choice.candidates.length : 0).toBe(passing.length);
        const lowered: Tier = value.tierCap && tierRank(value.tierCap) < tierRank(lower) ? value.tierCap : lower;
        const capped = selectModel({ ...value, tierCap: lowered });
        const before = choice.kind === "selected" ? new Set(choice.candidates) : new Set<string>();
        for (const id of capped.kind === "selected" ? capped.candidates : []) expect(before.has(id)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
