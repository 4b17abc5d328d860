import {
  KeelError,
  SafeNameSchema,
  canonicalJson,
  systemClock,
  validateOrThrow,
  type Clock,
  type EventBus,
} from "@keel/core";
import type { KeelStore } from "@keel/store";
import { isKeelStore, keelStoreSchema } from "@keel/store/kit";
import { z } from "zod";
import { LimitsSchema, type Limits } from "./budget-dimensions.js";
import { createScopeHandle, type BudgetScope } from "./budget-scope.js";
import type { BudgetContext, ResolvedScope } from "./internal/budget-context.js";
import { createLedgerEvents } from "./internal/ledger-events.js";
import type { ScopeDeclaration } from "./internal/ledger-rules.js";
import { LimitLevelSchema, intersectValidLevels, type LimitLevel } from "./limits-intersect.js";

/** Options of {@link createBudget}. */
export interface BudgetOptions {
  /**
   * Where ledgers live: one document per root scope, changed only by compare-and-swap. With
   * `logs`, closes (settle, abandon, expire) are appended to a close log beside the document
   * and folded into the document by the next reserve. When the store offers buffered appends
   * (`capabilities.bufferedAppends`), a close is appended with `durable: false`: a reserve +
   * settle pair is then one durable write (the reserve's), and a power loss within the store's
   * sync delay of a settle may undo it (the reservation is open again, charged in full).
   */
  store: Pick<KeelStore, "docs"> & Partial<Pick<KeelStore, "logs" | "capabilities">>;
  /** Time of reservations and expiry. Default the system clock. */
  clock?: Clock;
  /** Receives `budget.reserved`, `budget.settled`, `budget.refused` and `budget.threshold`. */
  events?: EventBus;
  /** Default warning thresholds in percent of a limit (each reported once). Default `[80]`. */
  warnAtPercent?: number[];
  /** Key prefix of the ledger documents (safe names). Default `["budget"]`. */
  keyPrefix?: string[];
}

/** Options of {@link Budget.scope}. */
export interface ScopeOptions {
  /**
   * The scope's own limits: plain {@link Limits} (their source is the scope id), or named levels
   * (`profile`, `role`…) intersected at the strictest value, each limit keeping its level as source.
   * Default: no limit of its own (the parents' still apply).
   */
  limits?: Limits | LimitLevel[];
  /**
   * Parent scopes of this budget (all in one ledger: they must share one root). Their limits
   * apply here too, so a child can tighten a limit but never loosen it. Default: none (a root).
   */
  parents?: BudgetScope[];
  /** Warning thresholds of this scope in percent. Default: the budget's. */
  warnAtPercent?: number[];
}

/** A ledger of budget scopes kept in a store. */
export interface Budget {
  /**
   * The handle of scope `id`. Declares the scope; nothing is written until the first reservation.
   * Declare a scope the same way in every process that uses it.
   *
   * @throws KeelError `invalid_input` for a bad id, limits or thresholds, a parent from another
   *   budget, parents in two ledgers (different roots), or an id repeated in the chain.
   */
  scope(id: string, options?: ScopeOptions): BudgetScope;
}

const isClock = (value: unknown) => typeof (value as Clock | undefined)?.now === "function";
const isEventBus = (value: unknown) => typeof (value as EventBus | undefined)?.emit === "function";

const PercentsSchema = z.array(z.number().int().min(1).max(100)).max(10);

const BudgetOptionsSchema = z.strictObject({
  store: keelStoreSchema(["docs"]),
  clock: z.custom<Clock>(isClock, "clock must have now()").optional(),
  events: z.custom<EventBus>(isEventBus, "events must be an EventBus (with emit)").optional(),
  warnAtPercent: PercentsSchema.optional(),
  keyPrefix: z.array(SafeNameSchema).min(1).max(8).optional(),
});

const ScopeOptionsSchema = z
  .strictObject({
    limits: z.union([LimitsSchema, z.array(LimitLevelSchema).max(32)]).optional(),
    parents: z.array(z.unknown()).max(32).optional(),
    warnAtPercent: PercentsSchema.optional(),
  })
  .optional();

/**
 * Creates a budget: scopes with limits that intersect down the chain, reservations before work,
 * settlement after it. All state lives in `store` (one document per root scope, changed by
 * compare-and-swap), so processes sharing the store share the budget and never together pass a
 * limit.
 *
 * @throws KeelError `invalid_input` when the options are malformed.
 *
 * @example
 * ```ts
 * const budget = createBudget({ store: createMemoryStore() });
 * const workflow = budget.scope("workflow-1", { limits: { tokens: 100_000, calls: 20 } });
 * const task = budget.scope("task-1", { limits: { tokens: 30_000 }, parents: [workflow] });
 * const reservation = await task.reserve({ tokens: 12_000, calls: 1 });
 * if (reservation.isOk()) await reservation.value.settle({ tokens: 9_500 });
 * ```
 */
export function createBudget(options: BudgetOptions): Budget {
  const valid = validateOrThrow(BudgetOptionsSchema, options, "budget options");
  const clock = valid.clock ?? systemClock;
  const context: BudgetContext = {
    docs: valid.store.docs,
    logs: isKeelStore(valid.store, ["logs"]) ? valid.store.logs : undefined,
    bufferedCloses: () => (valid.store as Partial<Pick<KeelStore, "capabilities">>).capabilities?.bufferedAppends === true,
    lockedUpdates: () => (valid.store as Partial<Pick<KeelStore, "capabilities">>).capabilities?.lockedUpdates === true && typeof valid.store.docs.update === "function",
    clock,
    events: createLedgerEvents(valid.events, () => clock.now()),
    prefix: valid.keyPrefix ?? ["budget"],
    warnAtPercent: uniqueSorted(valid.warnAtPercent ?? [80]),
    known: new Map(),
  };
  const resolvedOf = new WeakMap<BudgetScope, ResolvedScope>();
  return Object.freeze({
    scope(id: string, scopeOptions?: ScopeOptions): BudgetScope {
      const resolved = resolveScope(context, id, scopeOptions, (parent) => resolvedOf.get(parent as BudgetScope));
      const handle = createScopeHandle(resolved);
      resolvedOf.set(handle, resolved);
      return handle;
    },
  });
}

function uniqueSorted(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function invalid(message: string, details: Record<string, string | string[]>): KeelError {
  return new KeelError("invalid_input", message, { details: { what: "budget scope", ...details } });
}

/** Validates a scope declaration and resolves its chain and ledger. Throws `invalid_input`. */
function resolveScope(
  context: BudgetContext,
  id: string,
  options: ScopeOptions | undefined,
  lookup: (parent: unknown) => ResolvedScope | undefined,
): ResolvedScope {
  const scopeId = validateOrThrow(SafeNameSchema, id, "budget scope id");
  const valid = validateOrThrow(ScopeOptionsSchema, options, `options of budget scope "${scopeId}"`) ?? {};
  const parents = (valid.parents ?? []).map((parent) => {
    const resolved = lookup(parent);
    if (!resolved) throw invalid(`a parent of budget scope "${scopeId}" is not a scope of this budget`, { scope: scopeId });
    return resolved;
  });
  const limits = valid.limits as Limits | LimitLevel[] | undefined;
  const declaration: ScopeDeclaration = {
    id: scopeId,
    limits: intersectValidLevels(Array.isArray(limits) ? limits : [{ name: scopeId, limits: limits ?? {} }]),
    parents: [...new Set(parents.map((parent) => parent.chain[0]!.id))],
    warnAtPercent: valid.warnAtPercent ? uniqueSorted(valid.warnAtPercent) : [...context.warnAtPercent],
  };
  const roots = [...new Set(parents.map((parent) => parent.root))];
  if (roots.length > 1) {
    throw invalid(`the parents of budget scope "${scopeId}" belong to different ledgers (roots ${roots.join(", ")}): give them one common root scope`, {
      scope: scopeId,
      roots,
    });
  }
  const root = roots[0] ?? scopeId;
  return { context, chain: buildChain(declaration, parents), root, key: [...context.prefix, root] };
}

/** The scope first, then every ancestor once (nearest first); one id must mean one declaration. */
function buildChain(declaration: ScopeDeclaration, parents: readonly ResolvedScope[]): ScopeDeclaration[] {
  const chain: ScopeDeclaration[] = [declaration];
  const seen = new Map<string, string>([[declaration.id, canonicalJson(declaration)]]);
  for (const ancestor of parents.flatMap((parent) => parent.chain)) {
    const known = seen.get(ancestor.id);
    if (ancestor.id === declaration.id) {
      throw invalid(`budget scope "${declaration.id}" cannot be its own ancestor`, { scope: declaration.id });
    }
    if (known === undefined) {
      seen.set(ancestor.id, canonicalJson(ancestor));
      chain.push(ancestor);
    } else if (known !== canonicalJson(ancestor)) {
      throw invalid(`budget scope "${ancestor.id}" is declared twice with different limits or parents among the ancestors of "${declaration.id}"`, {
        scope: declaration.id,
        ancestor: ancestor.id,
      });
    }
  }
  return chain;
}
