import { KeelError, validate, type JsonValue } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { AmountSchema, BUDGET_DIMENSIONS, zeroTotals, type Totals } from "../budget-dimensions.js";
import type { EffectiveLimits } from "../limits-intersect.js";
import type { SettlementOutcome } from "../budget-snapshot.js";

/** How a reservation was closed. */
export type ClosedOutcome = SettlementOutcome;

/** One scope's row in a ledger document. Counters include every descendant's reservations. */
export interface LedgerScopeEntry {
  /** The limits last declared for this scope, with their source level. */
  limits: EffectiveLimits;
  /** The parent scope ids last declared. */
  parents: string[];
  /** Warning thresholds in percent. */
  warnAtPercent: number[];
  /** Sum of the open reservations charged to this scope. */
  reserved: Totals;
  /** Sum of what closed reservations charged to this scope. */
  settled: Totals;
  /** Sum of what was charged above the reservations (part of `settled`). */
  overrun: Totals;
  /** Thresholds already reported, as `dimension:percent:limit`. */
  warned: string[];
}

/** A reservation not yet settled, abandoned or expired. */
export interface OpenReservation {
  /** The scope it was made on. */
  scope: string;
  /** Every scope it is charged to: `scope` first, then its ancestors. */
  chain: string[];
  amounts: Totals;
  /** When it was made (epoch ms, the budget's clock). */
  at: number;
}

/** A recently closed reservation, kept to tell a double settle from an unknown id. */
export interface ClosedReservation {
  id: string;
  scope: string;
  outcome: ClosedOutcome;
  at: number;
}

/** The ledger document of one root scope and every scope below it. */
export interface Ledger {
  schema: 1;
  root: string;
  scopes: Record<string, LedgerScopeEntry>;
  open: Record<string, OpenReservation>;
  /** Most recent last; bounded (see {@link MAX_CLOSED_KEPT}). Stays empty when closes go to the close log. */
  closed: ClosedReservation[];
  /** The last seq of the close log folded into these totals (absent: none, or no close log). */
  foldedSeq?: number;
  /**
   * The id of the record at `foldedSeq` (absent in ledgers written before it was kept): a
   * different record there, or none, means the log lost records after the fold and reuses
   * their seqs (see `unfoldedCloses`).
   */
  foldedId?: string;
}

/** How many closed reservations a ledger remembers for double-settle detection. */
export const MAX_CLOSED_KEPT = 100;

const TotalsSchema = z.strictObject({
  tokens: AmountSchema,
  timeMs: AmountSchema,
  calls: AmountSchema,
  costMicroUsd: AmountSchema,
});
const LimitSourceSchema = z.strictObject({ limit: AmountSchema, source: z.string() });
const EffectiveLimitsSchema = z.strictObject({
  tokens: LimitSourceSchema.optional(),
  timeMs: LimitSourceSchema.optional(),
  calls: LimitSourceSchema.optional(),
  costMicroUsd: LimitSourceSchema.optional(),
});
const ScopeEntrySchema = z.strictObject({
  limits: EffectiveLimitsSchema,
  parents: z.array(z.string()),
  warnAtPercent: z.array(z.number()),
  reserved: TotalsSchema,
  settled: TotalsSchema,
  overrun: TotalsSchema,
  warned: z.array(z.string()),
});
const LedgerSchema = z.strictObject({
  schema: z.literal(1),
  root: z.string(),
  scopes: z.record(z.string(), ScopeEntrySchema),
  open: z.record(
    z.string(),
    z.strictObject({ scope: z.string(), chain: z.array(z.string()).min(1), amounts: TotalsSchema, at: z.number() }),
  ),
  closed: z.array(
    z.strictObject({ id: z.string(), scope: z.string(), outcome: z.enum(["settled", "abandoned", "expired"]), at: z.number() }),
  ),
  foldedSeq: z.number().int().min(0).optional(),
  foldedId: z.string().min(1).optional(),
});

/** An empty ledger for `root`. */
export function emptyLedger(root: string): Ledger {
  return { schema: 1, root, scopes: {}, open: {}, closed: [] };
}

/** An empty row for a scope. */
export function emptyScopeEntry(): LedgerScopeEntry {
  return {
    limits: {},
    parents: [],
    warnAtPercent: [],
    reserved: zeroTotals(),
    settled: zeroTotals(),
    overrun: zeroTotals(),
    warned: [],
  };
}

/** `record[key]` when `key` is the record's own property (scope ids such as `constructor` are valid). */
export function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/**
 * Reads a stored ledger. Fails closed with `corrupt` when the document does not have the ledger's
 * shape or its counters disagree with its open reservations.
 */
export function parseLedger(value: JsonValue, location: string): Result<Ledger, KeelError> {
  const parsed = validate(LedgerSchema, value, "budget ledger");
  if (parsed.isErr()) {
    return err(
      new KeelError("corrupt", `budget ledger ${location} is not a valid ledger: ${parsed.error.message}`, {
        details: { location, issues: parsed.error.details["issues"] ?? null },
        cause: parsed.error,
      }),
    );
  }
  const ledger = parsed.value as Ledger;
  const problem = findInconsistency(ledger);
  if (problem) {
    return err(new KeelError("corrupt", `budget ledger ${location} is inconsistent: ${problem}`, { details: { location, problem } }));
  }
  return ok(ledger);
}

/** Recomputes each scope's reserved counters from the open reservations; names the first mismatch. */
function findInconsistency(ledger: Ledger): string | undefined {
  const sums = new Map<string, Totals>();
  for (const [id, reservation] of Object.entries(ledger.open)) {
    for (const scope of reservation.chain) {
      if (!own(ledger.scopes, scope)) return `open reservation ${id} is charged to unknown scope "${scope}"`;
      const sum = sums.get(scope) ?? zeroTotals();
      for (const dimension of BUDGET_DIMENSIONS) sum[dimension] += reservation.amounts[dimension];
      sums.set(scope, sum);
    }
  }
  for (const [scope, entry] of Object.entries(ledger.scopes)) {
    const sum = sums.get(scope) ?? zeroTotals();
    for (const dimension of BUDGET_DIMENSIONS) {
      if (entry.reserved[dimension] !== sum[dimension]) {
        return `scope "${scope}" has ${entry.reserved[dimension]} ${dimension} reserved but its open reservations sum to ${sum[dimension]}`;
      }
    }
  }
  return undefined;
}
