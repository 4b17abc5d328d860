import { createBudget, type BudgetScope } from "@keel/budget";
import { BUDGET_DIMENSIONS, type LimitLevel } from "@keel/budget/schemas";
import { KeelError, toKeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { z } from "zod";
import type { DocumentKey } from "./inspect-keys.js";
import type { BudgetScopeInspection, LedgerInspection } from "./inspect-model.js";

/**
 * Just enough of a ledger document to re-declare its scopes: ids, parents and the limits each
 * last declared (with their source level). The budget package checks the whole document itself
 * when `snapshot()` reads it, and fails closed on anything wrong.
 */
const LedgerOutlineSchema = z.object({
  root: z.string(),
  scopes: z.record(
    z.string(),
    z.object({
      limits: z.record(z.string(), z.object({ limit: z.number(), source: z.string() })),
      parents: z.array(z.string()),
    }),
  ),
});
type LedgerOutline = z.infer<typeof LedgerOutlineSchema>;

/** The limits of a ledger row as named levels: one level per source, so each limit keeps its source. */
function levelsOf(limits: LedgerOutline["scopes"][string]["limits"]): LimitLevel[] {
  const levels = new Map<string, LimitLevel>();
  for (const [dimension, { limit, source }] of Object.entries(limits)) {
    const level = levels.get(source) ?? { name: source, limits: {} };
    (level.limits as Record<string, number>)[dimension] = limit;
    levels.set(source, level);
  }
  return [...levels.values()];
}

/** Declares every scope of the outline, parents first; throws `corrupt` on a cycle or a missing parent. */
function declareScopes(store: Pick<KeelStore, "docs">, outline: LedgerOutline, location: string): Map<string, BudgetScope> {
  const budget = createBudget({ store });
  const handles = new Map<string, BudgetScope>();
  const declare = (id: string, path: readonly string[]): BudgetScope => {
    const known = handles.get(id);
    if (known) return known;
    if (path.includes(id)) throw new KeelError("corrupt", `budget ledger ${location} has a parent cycle through scope "${id}"`);
    const row = Object.hasOwn(outline.scopes, id) ? outline.scopes[id] : undefined;
    if (!row) throw new KeelError("corrupt", `budget ledger ${location} names parent scope "${id}" but has no row for it`);
    const parents = row.parents.map((parent) => declare(parent, [...path, id]));
    const handle = budget.scope(id, { limits: levelsOf(row.limits), parents });
    handles.set(id, handle);
    return handle;
  };
  for (const id of Object.keys(outline.scopes).sort()) declare(id, []);
  return handles;
}

/** The root first, then the other scopes by id. */
function scopeOrder(root: string) {
  return (a: string, b: string) => (a === root ? -1 : b === root ? 1 : a < b ? -1 : a > b ? 1 : 0);
}

/**
 * Reads one budget ledger through the budget package: re-declares its scopes as the ledger
 * records them and takes each scope's `snapshot()` (limits with their source, reserved, settled,
 * overrun, remaining over the chain, open reservations). Read-only: only `docs.get` is called.
 * A document that is not a valid, consistent ledger is `corrupt`; never throws. `null` when the
 * document is gone.
 */
export async function inspectLedger(store: Pick<KeelStore, "docs">, document: DocumentKey): Promise<LedgerInspection | null> {
  const key = document.key.join("/");
  const root = document.key[1] ?? "";
  const corrupt = (error: KeelError): LedgerInspection => ({ status: "corrupt", key, root, code: error.code, message: error.message });
  const read = await store.docs.get(document.key);
  if (read.isErr()) return corrupt(read.error);
  if (!read.value) return null;
  const outline = LedgerOutlineSchema.safeParse(read.value.value);
  if (!outline.success || outline.data.root !== root) {
    return corrupt(new KeelError("corrupt", `budget ledger ${key} is not a ledger of root scope "${root}"`));
  }
  let handles: Map<string, BudgetScope>;
  try {
    handles = declareScopes(store, outline.data, key);
  } catch (error) {
    const cause = toKeelError(error, "corrupt");
    return corrupt(cause.code === "corrupt" ? cause : new KeelError("corrupt", `budget ledger ${key} cannot be read: ${cause.message}`, { cause }));
  }
  const scopes: BudgetScopeInspection[] = [];
  for (const id of [...handles.keys()].sort(scopeOrder(root))) {
    const handle = handles.get(id)!;
    if (handle.root !== root) return corrupt(new KeelError("corrupt", `budget ledger ${key} holds scope "${id}" whose root is "${handle.root}"`));
    const snapshot = await handle.snapshot();
    if (snapshot.isErr()) return corrupt(snapshot.error);
    const { scope, parents, limits, reserved, settled, overrun, remaining, openReservations } = snapshot.value;
    scopes.push({ scope, parents: [...parents], limits, reserved, settled, overrun, remaining, openReservations });
  }
  return { status: "ok", key, root, version: read.value.version, updatedAt: read.value.updatedAt, scopes };
}

/** The dimensions worth showing for a scope: limited ones and ones with anything charged. Pure. */
export function shownDimensions(scope: BudgetScopeInspection): (typeof BUDGET_DIMENSIONS)[number][] {
  return BUDGET_DIMENSIONS.filter(
    (dimension) => scope.limits[dimension] !== undefined || scope.reserved[dimension] > 0 || scope.settled[dimension] > 0,
  );
}
