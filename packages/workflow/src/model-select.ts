import { validateOrThrow } from "@keel/core";
import { z } from "zod";
import { TierSchema, tierRank, type Tier } from "./definition-schemas.js";

/** A model the host declares: what routing may choose from. */
export const ModelSchema = z.strictObject({
  id: z.string().min(1).max(128),
  /** Relative strength, 0 to 100 (the host's own scale; higher is stronger). */
  strength: z.number().int().min(0).max(100),
  /** Context window in tokens. */
  contextWindow: z.number().int().min(1).max(100_000_000),
  capabilities: z.array(z.string().min(1).max(64)).max(32).default([]),
  location: z.literal(["installed", "remote"]),
  /** Measured latency of a typical call in ms, when known. */
  latencyMs: z.number().int().nonnegative().optional(),
  /** Whether the host reviewed this model's quality for this kind of work. */
  reviewed: z.boolean().default(false),
  /** The tier the model belongs to. */
  tier: TierSchema,
});

/** A model as declared. */
export type ModelInput = z.input<typeof ModelSchema>;
/** A validated model. */
export type Model = z.output<typeof ModelSchema>;

/** The zod schema of a model registry (at most 64 models, unique ids). */
export const ModelRegistrySchema = z
  .array(ModelSchema)
  .max(64)
  .refine((models) => new Set(models.map((model) => model.id)).size === models.length, "model ids must be unique");

/** How candidates are ordered: `balanced` (installed, then fast) or `quality` (reviewed, then strong). */
export type RoutingPreference = "balanced" | "quality";

/** Why no model could be chosen, by gate. */
export type SelectionGate = "role_models" | "strength" | "context" | "capabilities" | "tier" | "allowlist" | "escalation" | "context_fit";

/** The role limits routing reads (an effective role, after profile overrides). */
export interface RoutingRole {
  id: string;
  minimumStrength: number;
  minimumContext: number;
  capabilities: readonly string[];
  tier: Tier;
  models?: readonly string[] | undefined;
}

/** Input of {@link selectModel}. */
export interface SelectModelInput {
  models: readonly Model[];
  role: RoutingRole;
  /** Capabilities the stage's skills need, beyond the role's own. */
  capabilities?: readonly string[];
  /** The host's cap for this attempt; the effective cap is the lower of it and the role's tier. */
  tierCap?: Tier | undefined;
  /** An explicit allowlist (a profile's `allowedModels`): never widened by other models. */
  allowedModels?: readonly string[] | undefined;
  preference: RoutingPreference;
  /** UTF-8 bytes of the whole serialized prompt and output schema. */
  promptBytes: number;
  /** UTF-8 bytes the output may take. */
  outputBytes: number;
  /** Strengths of the models already tried in this stage: a retry must be strictly stronger. */
  previousStrengths?: readonly number[];
}

/** What {@link selectModel} decided. */
export type ModelSelection =
  | { kind: "selected"; model: Model; candidates: string[]; tierCap: Tier; estimatedTokens: number }
  | { kind: "refused"; gate: SelectionGate; reason: string; details: Record<string, string | number | string[]> };

/** What {@link selectModel} reads of its input: checked before any gate runs. */
const SelectModelInputSchema = z.looseObject({
  models: z.array(ModelSchema),
  role: z.looseObject({
    id: z.string(),
    minimumStrength: z.number(),
    minimumContext: z.number(),
    capabilities: z.array(z.string()),
    tier: TierSchema,
    models: z.array(z.string()).optional(),
  }),
  capabilities: z.array(z.string()).optional(),
  tierCap: TierSchema.optional(),
  allowedModels: z.array(z.string()).optional(),
  preference: z.literal(["balanced", "quality"]),
  promptBytes: z.number().nonnegative(),
  outputBytes: z.number().nonnegative(),
  previousStrengths: z.array(z.number()).optional(),
});

/** Conservative token estimate of UTF-8 bytes (bytes / 3, rounded up: over-counts ordinary text). */
export function tokensOfBytes(bytes: number): number {
  return Math.ceil(bytes / 3);
}

/**
 * Chooses the model of one call, purely. The candidates are the models that pass every gate, in
 * this order (the first gate that leaves none is the refusal's `gate`):
 * 1. `role_models` — enabled for the role (its `models` list, when it has one);
 * 2. `strength` — at least the role's minimum strength;
 * 3. `context` — at least the role's minimum context window;
 * 4. `capabilities` — every capability of the role and the stage's skills;
 * 5. `tier` — within the cap (the lower of the host's cap and the role's tier): a ceiling, never a floor;
 * 6. `allowlist` — in the profile's explicit `allowedModels`, when given (never widened);
 * 7. `escalation` — strictly stronger than every model already tried in the stage;
 * 8. `context_fit` — the prompt, schema and output allowance fit the window by a conservative
 *    UTF-8 byte estimate (refused before the call, never truncated).
 *
 * An unmet minimum never raises the cap: it is a refusal naming the gate and the values.
 * Candidates are ordered by `preference`, ties by id.
 *
 * @throws KeelError `invalid_input` when `input` is not a {@link SelectModelInput} (a model
 * that is not a {@link Model}, a role without its limits, a byte count that is not a
 * non-negative number …): a refusal is an answer about the models, a bad input is the caller's
 * mistake, so it is thrown rather than answered as a gate.
 *
 * @example
 * ```ts
 * const choice = selectModel({ models, role, preference: "balanced", promptBytes: 9_000, outputBytes: 12_000 });
 * if (choice.kind === "refused") console.log(choice.gate, choice.reason);
 * ```
 */
export function selectModel(given: SelectModelInput): ModelSelection {
  // The checked copy is read from here on: a caller's getter or proxy is read once, inside the check.
  const input = validateOrThrow(SelectModelInputSchema, given, "model selection input") as SelectModelInput;
  const { role } = input;
  const cap: Tier = input.tierCap !== undefined && tierRank(input.tierCap) < tierRank(role.tier) ? input.tierCap : role.tier;
  const required = [...new Set([...role.capabilities, ...(input.capabilities ?? [])])].sort();
  const previousBest = Math.max(-1, ...(input.previousStrengths ?? []));
  const estimatedTokens = tokensOfBytes(input.promptBytes) + tokensOfBytes(input.outputBytes);
  let pool = [...input.models];
  const gates: [SelectionGate, (model: Model) => boolean, () => { reason: string; details: Record<string, string | number | string[]> }][] = [
    ["role_models", (model) => !role.models || role.models.includes(model.id), () => ({ reason: `no declared model is enabled for role "${role.id}"`, details: { enabled: [...(role.models ?? [])] } })],
    [
      "strength",
      (model) => model.strength >= role.minimumStrength,
      () => ({ reason: `role "${role.id}" needs strength ${role.minimumStrength}; the strongest enabled model has ${strongest(pool)}`, details: { required: role.minimumStrength, best: strongest(pool) } }),
    ],
    [
      "context",
      (model) => model.contextWindow >= role.minimumContext,
      () => ({ reason: `role "${role.id}" needs a context window of ${role.minimumContext} tokens; the largest is ${largest(pool)}`, details: { required: role.minimumContext, best: largest(pool) } }),
    ],
    [
      "capabilities",
      (model) => required.every((capability) => model.capabilities.includes(capability)),
      () => ({ reason: `no eligible model has every capability of ${required.join(", ")}`, details: { required } }),
    ],
    [
      "tier",
      (model) => tierRank(model.tier) <= tierRank(cap),
      () => ({ reason: `every eligible model is above the tier cap "${cap}": a cap is never raised to meet a minimum`, details: { cap, tiers: [...new Set(pool.map((model) => model.tier))] } }),
    ],
    [
      "allowlist",
      (model) => !input.allowedModels || input.allowedModels.includes(model.id),
      () => ({ reason: `no eligible model is in the profile's allowedModels (${(input.allowedModels ?? []).join(", ")})`, details: { allowed: [...(input.allowedModels ?? [])], eligible: pool.map((model) => model.id) } }),
    ],
    [
      "escalation",
      (model) => model.strength > previousBest,
      () => ({ reason: `no eligible model is stronger than the one already tried (strength ${previousBest}): no same-model retry`, details: { tried: previousBest } }),
    ],
    [
      "context_fit",
      (model) => estimatedTokens <= model.contextWindow,
      () => ({ reason: `the prompt and output allowance (about ${estimatedTokens} tokens by UTF-8 bytes / 3) fit no eligible model's window (largest ${largest(pool)})`, details: { estimatedTokens, best: largest(pool) } }),
    ],
  ];
  for (const [gate, pass, explain] of gates) {
    const next = pool.filter(pass);
    if (next.length === 0) return { kind: "refused", gate, ...explain() };
    pool = next;
  }
  const ordered = pool.sort(input.preference === "quality" ? byQuality : byBalance);
  return { kind: "selected", model: ordered[0]!, candidates: ordered.map((model) => model.id), tierCap: cap, estimatedTokens };
}

const strongest = (models: readonly Model[]) => Math.max(0, ...models.map((model) => model.strength));
const largest = (models: readonly Model[]) => Math.max(0, ...models.map((model) => model.contextWindow));
const byId = (a: Model, b: Model) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function byBalance(a: Model, b: Model): number {
  if (a.location !== b.location) return a.location === "installed" ? -1 : 1;
  const latency = (a.latencyMs ?? Number.MAX_SAFE_INTEGER) - (b.latencyMs ?? Number.MAX_SAFE_INTEGER);
  if (latency !== 0) return latency;
  if (a.strength !== b.strength) return b.strength - a.strength;
  return byId(a, b);
}

function byQuality(a: Model, b: Model): number {
  if (a.reviewed !== b.reviewed) return a.reviewed ? -1 : 1;
  if (a.strength !== b.strength) return b.strength - a.strength;
  if (a.contextWindow !== b.contextWindow) return b.contextWindow - a.contextWindow;
  return byId(a, b);
}
