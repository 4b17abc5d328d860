import { BUDGET_DIMENSIONS, toTotals, zeroTotals, type BudgetDimension, type Totals } from "../budget-dimensions.js";
import type { EffectiveLimits } from "../limits-intersect.js";
import type { Settlement } from "../budget-snapshot.js";
import {
  MAX_CLOSED_KEPT,
  emptyLedger,
  emptyScopeEntry,
  own,
  type ClosedOutcome,
  type ClosedReservation,
  type Ledger,
  type LedgerScopeEntry,
  type OpenReservation,
} from "./ledger-schema.js";

/** A scope as its handle declares it. */
export interface ScopeDeclaration {
  id: string;
  limits: EffectiveLimits;
  parents: string[];
  warnAtPercent: number[];
}

/** A threshold crossed by a change (reported once per scope, dimension, percent and limit). */
export interface ThresholdCrossed {
  scope: string;
  dimension: BudgetDimension;
  percent: number;
  used: number;
  limit: number;
  source: string;
}

/** One dimension a reservation would push past a scope's limit. */
export interface Violation {
  scope: string;
  dimension: BudgetDimension;
  asked: number;
  remaining: number;
  limit: number;
  source: string;
}

/** Why a reservation was refused: the binding violation, then all of them. */
export interface Refusal extends Violation {
  violations: Violation[];
}

/** The outcome of {@link decideReserve}. */
export type ReserveDecision =
  | { kind: "reserved"; ledger: Ledger; reservation: OpenReservation; thresholds: ThresholdCrossed[] }
  | { kind: "refused"; refusal: Refusal };

/** Known actual amounts at settlement; a dimension left out (or `null`) is unknown. */
export interface ActualAmounts {
  tokens?: number | null;
  timeMs?: number | null;
  costMicroUsd?: number | null;
}

/** The outcome of {@link decideClose}. */
export type CloseDecision =
  | { kind: "closed"; ledger: Ledger; reservation: OpenReservation; settlement: Settlement; thresholds: ThresholdCrossed[] }
  | { kind: "already_closed"; closed: ClosedReservation }
  | { kind: "missing" };

/** Used amount (reserved plus settled) of a scope row in one dimension. */
export function usedOf(entry: LedgerScopeEntry, dimension: BudgetDimension): number {
  return entry.reserved[dimension] + entry.settled[dimension];
}

/** What is left under a limit (never below 0). */
export function remainingOf(entry: LedgerScopeEntry, dimension: BudgetDimension, limit: number): number {
  return Math.max(0, limit - usedOf(entry, dimension));
}

/**
 * A copy of `ledger` that can be changed without touching the original: the maps are copied
 * shallowly (open and closed reservations are never changed in place) and the rows of `touched`
 * scopes deeply (created empty when missing).
 */
function editableCopy(ledger: Ledger, touched: Iterable<string>): Ledger {
  const copy: Ledger = { ...ledger, scopes: { ...ledger.scopes }, open: { ...ledger.open }, closed: [...ledger.closed] };
  for (const id of touched) {
    const entry = own(ledger.scopes, id);
    copy.scopes[id] = entry ? copyScopeEntry(entry) : emptyScopeEntry();
  }
  return copy;
}

/** A deep copy of a scope row (by its known shape: `structuredClone` cost a reserve a tenth of its CPU). */
function copyScopeEntry(entry: LedgerScopeEntry): LedgerScopeEntry {
  return {
    limits: copyLimits(entry.limits),
    parents: [...entry.parents],
    warnAtPercent: [...entry.warnAtPercent],
    reserved: { ...entry.reserved },
    settled: { ...entry.settled },
    overrun: { ...entry.overrun },
    warned: [...entry.warned],
  };
}

/** A deep copy of effective limits, in their key order. */
function copyLimits(limits: EffectiveLimits): EffectiveLimits {
  const copy: EffectiveLimits = {};
  for (const dimension of Object.keys(limits) as BudgetDimension[]) {
    const limit = limits[dimension];
    if (limit) copy[dimension] = { ...limit };
  }
  return copy;
}

/**
 * Decides a reservation of `amounts` on `chain[0]`, charged to every scope of `chain` (all or
 * nothing). The chain's declarations are recorded first; then each limit is checked against what
 * that scope already has reserved and settled. Pure: returns the next ledger or the refusal.
 */
export function decideReserve(
  current: Ledger | undefined,
  request: { root: string; chain: readonly ScopeDeclaration[]; amounts: Totals; reservationId: string; at: number },
): ReserveDecision {
  const ledger = editableCopy(current ?? emptyLedger(request.root), request.chain.map((declaration) => declaration.id));
  for (const declaration of request.chain) declare(ledger, declaration);
  const violations = findViolations(ledger, request.chain, request.amounts);
  const binding = pickBinding(violations);
  if (binding) return { kind: "refused", refusal: { ...binding, violations } };
  const chain = request.chain.map((declaration) => declaration.id);
  const reservation: OpenReservation = { scope: chain[0]!, chain, amounts: toTotals(request.amounts), at: request.at };
  for (const scope of chain) add(ledger.scopes[scope]!.reserved, reservation.amounts);
  ledger.open[request.reservationId] = reservation;
  return { kind: "reserved", ledger, reservation, thresholds: crossThresholds(ledger, chain) };
}

function declare(ledger: Ledger, declaration: ScopeDeclaration): void {
  const entry = ledger.scopes[declaration.id]!;
  entry.limits = copyLimits(declaration.limits);
  entry.parents = [...declaration.parents];
  entry.warnAtPercent = [...declaration.warnAtPercent];
  // A threshold is reported once per limit: one reported under another limit is forgotten.
  entry.warned = entry.warned.filter((key) => {
    const [dimension, , limit] = key.split(":");
    return entry.limits[dimension as BudgetDimension]?.limit === Number(limit);
  });
}

function findViolations(ledger: Ledger, chain: readonly ScopeDeclaration[], amounts: Totals): Violation[] {
  const violations: Violation[] = [];
  for (const dimension of BUDGET_DIMENSIONS) {
    const asked = amounts[dimension];
    if (asked === 0) continue;
    for (const declaration of chain) {
      const entry = ledger.scopes[declaration.id]!;
      // Unlimited still means within the integers a ledger can count exactly.
      const limit = entry.limits[dimension] ?? { limit: Number.MAX_SAFE_INTEGER, source: "integer-range" };
      const remaining = remainingOf(entry, dimension, limit.limit);
      if (asked > remaining) {
        violations.push({ scope: declaration.id, dimension, asked, remaining, limit: limit.limit, source: limit.source });
      }
    }
  }
  return violations;
}

/**
 * The binding violation: the first dimension (in {@link BUDGET_DIMENSIONS} order) that fails, and
 * in it the scope with the least left (the nearest scope on a tie).
 */
function pickBinding(violations: readonly Violation[]): Violation | undefined {
  const first = violations[0];
  if (!first) return undefined;
  let binding = first;
  for (const violation of violations) {
    if (violation.dimension === first.dimension && violation.remaining < binding.remaining) binding = violation;
  }
  return binding;
}

function add(target: Totals, amounts: Totals): void {
  for (const dimension of BUDGET_DIMENSIONS) target[dimension] += amounts[dimension];
}

function subtract(target: Totals, amounts: Totals): void {
  for (const dimension of BUDGET_DIMENSIONS) target[dimension] -= amounts[dimension];
}

/** Marks and returns the thresholds newly crossed on the scopes of `chain`. */
function crossThresholds(ledger: Ledger, chain: readonly string[]): ThresholdCrossed[] {
  const crossed: ThresholdCrossed[] = [];
  for (const scope of chain) {
    const entry = ledger.scopes[scope]!;
    for (const dimension of BUDGET_DIMENSIONS) {
      const limit = entry.limits[dimension];
      if (!limit) continue;
      const used = usedOf(entry, dimension);
      if (used === 0) continue;
      for (const percent of [...entry.warnAtPercent].sort((a, b) => a - b)) {
        const key = `${dimension}:${percent}:${limit.limit}`;
        if (used * 100 < limit.limit * percent || entry.warned.includes(key)) continue;
        entry.warned.push(key);
        crossed.push({ scope, dimension, percent, used, limit: limit.limit, source: limit.source });
      }
    }
  }
  return crossed;
}

/**
 * What a reservation is charged when it closes:
 * - `settled`: tokens as reserved, or the actual when higher (an overrun); time as known (unused
 *   time refunded, more time an overrun), or as reserved when unknown; cost as reported (more
 *   than reserved is an overrun), or as reserved when unknown; calls as reserved.
 * - `abandoned` / `expired` (outcome unknown): the whole reservation.
 */
export function chargeFor(reserved: Totals, outcome: ClosedOutcome, actual: ActualAmounts): Settlement {
  const charged = { ...reserved };
  if (outcome === "settled") {
    if (actual.tokens != null) charged.tokens = Math.max(reserved.tokens, actual.tokens);
    if (actual.timeMs != null) charged.timeMs = actual.timeMs;
    if (actual.costMicroUsd != null) charged.costMicroUsd = actual.costMicroUsd;
  }
  const refunded = zeroTotals();
  const overrun = zeroTotals();
  for (const dimension of BUDGET_DIMENSIONS) {
    refunded[dimension] = Math.max(0, reserved[dimension] - charged[dimension]);
    overrun[dimension] = Math.max(0, charged[dimension] - reserved[dimension]);
  }
  return { outcome, reserved: { ...reserved }, charged, refunded, overrun };
}

/** Decides closing reservation `reservationId` with `outcome`. Pure. */
export function decideClose(
  current: Ledger | undefined,
  request: { reservationId: string; outcome: ClosedOutcome; actual: ActualAmounts; at: number },
): CloseDecision {
  const open = current ? own(current.open, request.reservationId) : undefined;
  if (!current || !open) {
    const closed = current?.closed.find((entry) => entry.id === request.reservationId);
    return closed ? { kind: "already_closed", closed } : { kind: "missing" };
  }
  const ledger = editableCopy(current, open.chain);
  const settlement = closeInPlace(ledger, request.reservationId, open, request);
  return { kind: "closed", ledger, reservation: open, settlement, thresholds: crossThresholds(ledger, open.chain) };
}

/** Closes an open reservation of `ledger` (changed in place; its chain's rows must be editable copies). */
function closeInPlace(
  ledger: Ledger,
  reservationId: string,
  open: OpenReservation,
  request: { outcome: ClosedOutcome; actual: ActualAmounts; at: number },
  remember = true,
): Settlement {
  const settlement = chargeFor(open.amounts, request.outcome, request.actual);
  for (const scope of open.chain) {
    const entry = ledger.scopes[scope]!;
    subtract(entry.reserved, open.amounts);
    add(entry.settled, settlement.charged);
    add(entry.overrun, settlement.overrun);
  }
  delete ledger.open[reservationId];
  if (!remember) return settlement;
  ledger.closed.push({ id: reservationId, scope: open.scope, outcome: request.outcome, at: request.at });
  if (ledger.closed.length > MAX_CLOSED_KEPT) ledger.closed.splice(0, ledger.closed.length - MAX_CLOSED_KEPT);
  return settlement;
}

/** The open reservations charged to `scope` made at or before `cutoff`, oldest first. */
export function staleReservations(ledger: Ledger | undefined, scope: string, cutoff: number): [string, OpenReservation][] {
  if (!ledger) return [];
  return Object.entries(ledger.open)
    .filter(([, reservation]) => reservation.chain.includes(scope) && reservation.at <= cutoff)
    .sort(([idA, a], [idB, b]) => a.at - b.at || (idA < idB ? -1 : 1));
}

/** One reservation expired by {@link decideExpire}. */
export interface ExpiredReservation {
  id: string;
  reservation: OpenReservation;
  settlement: Settlement;
}

/**
 * Decides expiring every open reservation charged to `scope` made at or before `cutoff`: each is
 * closed as `expired`, keeping its whole reservation. Pure; `undefined` when none is stale.
 */
export function decideExpire(
  current: Ledger | undefined,
  request: { scope: string; cutoff: number; at: number },
): { ledger: Ledger; expired: ExpiredReservation[]; thresholds: ThresholdCrossed[] } | undefined {
  const stale = staleReservations(current, request.scope, request.cutoff);
  if (!current || stale.length === 0) return undefined;
  const ledger = editableCopy(current, new Set(stale.flatMap(([, reservation]) => reservation.chain)));
  const expired: ExpiredReservation[] = [];
  const chains = new Set<string>();
  for (const [id, reservation] of stale) {
    const settlement = closeInPlace(ledger, id, reservation, { outcome: "expired", actual: {}, at: request.at });
    expired.push({ id, reservation, settlement });
    for (const scope of reservation.chain) chains.add(scope);
  }
  const thresholds = crossThresholds(ledger, [...chains]);
  return { ledger, expired, thresholds };
}

/** A close recorded in the close log: reservation `id` closed with `outcome` (log seq `seq`). */
export interface LoggedClose {
  id: string;
  seq: number;
  outcome: ClosedOutcome;
  actual: ActualAmounts;
  at: number;
}

/**
 * Folds logged closes into the totals: each close of a reservation still open moves it from
 * reserved to settled (as {@link decideClose} would, without remembering it in `closed`: the log
 * remembers it); a close of a reservation no longer open is skipped, so folding a close twice, or
 * the whole log again, changes nothing. Pure; `foldedSeq` and `foldedId` become the last close's
 * seq and id (also when they go back: the log lost records after an earlier fold). Returns
 * `current` itself when there is nothing to fold.
 */
export function decideFold(
  current: Ledger | undefined,
  closes: readonly LoggedClose[],
): { ledger: Ledger | undefined; folded: ExpiredReservation[]; thresholds: ThresholdCrossed[] } {
  const last = closes.at(-1);
  if (!current || !last) return { ledger: current, folded: [], thresholds: [] };
  const applicable = closes.filter((close) => own(current.open, close.id));
  const ledger = editableCopy(current, new Set(applicable.flatMap((close) => current.open[close.id]!.chain)));
  const folded: ExpiredReservation[] = [];
  const chains = new Set<string>();
  for (const close of applicable) {
    const reservation = current.open[close.id]!;
    folded.push({ id: close.id, reservation, settlement: closeInPlace(ledger, close.id, reservation, close, false) });
    for (const scope of reservation.chain) chains.add(scope);
  }
  ledger.foldedSeq = last.seq;
  ledger.foldedId = last.id;
  return { ledger, folded, thresholds: crossThresholds(ledger, [...chains]) };
}
