import { KeelError, newId, validate } from "@keel/core";
import { errAsync, ok, okAsync, type ResultAsync } from "neverthrow";
import type { LogStore } from "@keel/store";
import { AmountSchema, ReserveAmountsSchema, toTotals, type BudgetDimension, type ReserveAmounts, type Totals } from "./budget-dimensions.js";
import { closeRefusal, createReservationHandle, type Reservation } from "./budget-reservation.js";
import { snapshotOf, type ScopeLimit, type ScopeSnapshot } from "./budget-snapshot.js";
import type { ResolvedScope } from "./internal/budget-context.js";
import { refusalDetails } from "./internal/ledger-events.js";
import {
  chargeFor,
  decideClose,
  decideExpire,
  decideReserve,
  staleReservations,
  type ExpiredReservation,
  type Refusal,
  type ReserveDecision,
  type ThresholdCrossed,
} from "./internal/ledger-rules.js";
import { own, type Ledger, type OpenReservation } from "./internal/ledger-schema.js";
import { appendClose, findClose } from "./internal/ledger-log.js";
import { changeLedger, loadLedger, type ChangeOptions } from "./internal/ledger-store.js";

/** An open reservation as listed by {@link BudgetScope.openReservations}. */
export interface ReservationInfo {
  id: string;
  /** The scope it was made on. */
  scope: string;
  /** Every scope it is charged to. */
  chain: string[];
  amounts: Totals;
  /** When it was made (epoch ms). */
  reservedAt: number;
  /** How long ago, by the budget's clock. */
  ageMs: number;
}

/** What {@link BudgetScope.expireStale} did. */
export interface ExpireResult {
  /** The reservations expired (each keeps its whole reservation charged). */
  expired: ReservationInfo[];
  /** The scope after expiry. */
  snapshot: ScopeSnapshot;
}

/**
 * A budget scope: a node of a ledger (global, workflow, role, task, session…) with its own limits,
 * under its parents' limits. Reserving here also charges every ancestor, all or nothing, in one
 * compare-and-swap write of the ledger document.
 */
export interface BudgetScope {
  /** The scope id (a safe name). */
  readonly id: string;
  /** The root scope, which names the ledger document. */
  readonly root: string;
  /** Ids of the direct parents. */
  readonly parents: readonly string[];
  /** Effective limits (strictest over this scope and its ancestors) with their source. */
  readonly limits: Readonly<Partial<Record<BudgetDimension, ScopeLimit>>>;
  /**
   * Reserves amounts before work. Atomic over the scope and every ancestor: either all are
   * charged or none is.
   *
   * Errors: `budget_exceeded` (details: `scope`, `limitingScope`, `level`, `dimension`, `asked`,
   * `remaining`, `limit`, `violations`), `invalid_input`, store errors.
   */
  reserve(amounts: ReserveAmounts): ResultAsync<Reservation, KeelError>;
  /** The scope's limits, reserved, settled and remaining amounts. */
  snapshot(): ResultAsync<ScopeSnapshot, KeelError>;
  /** Open reservations charged to this scope (made on it or a descendant), oldest first. */
  openReservations(): ResultAsync<ReservationInfo[], KeelError>;
  /**
   * A handle to an open reservation of this ledger by id (e.g. after a restart), to settle or
   * abandon it. `not_found` when it is not open; `conflict` when it was already closed.
   */
  reservation(id: string): ResultAsync<Reservation, KeelError>;
  /**
   * Expires the open reservations charged to this scope made `olderThanMs` or more ago (by the
   * budget's clock): each is closed as `expired` and keeps its whole reservation, like
   * {@link Reservation.abandon}.
   */
  expireStale(olderThanMs: number): ResultAsync<ExpireResult, KeelError>;
}

/** Creates the handle of a resolved scope. */
export function createScopeHandle(resolved: ResolvedScope): BudgetScope {
  const self = resolved.chain[0]!;
  const limits = snapshotOf(undefined, resolved.root, resolved.chain).limits;
  return Object.freeze({
    id: self.id,
    root: resolved.root,
    parents: Object.freeze([...self.parents]),
    limits: Object.freeze(limits),
    reserve: (amounts: ReserveAmounts) => reserve(resolved, amounts),
    snapshot: () => load(resolved).map((ledger) => snapshotOf(ledger, resolved.root, resolved.chain)),
    openReservations: () => load(resolved).map((ledger) => listOpen(resolved, ledger, Infinity)),
    reservation: (id: string) => findReservation(resolved, id),
    expireStale: (olderThanMs: number) => expireStale(resolved, olderThanMs),
  });
}

function load(resolved: ResolvedScope): ResultAsync<Ledger | undefined, KeelError> {
  return loadLedger(resolved.context.docs, resolved.context.logs, resolved.key);
}

/** How `resolved`'s ledger is changed: its close log folded in, thresholds reported as events, the budget's known ledgers. */
function foldOf(resolved: ResolvedScope): ChangeOptions {
  const { context } = resolved;
  return { logs: context.logs, onThresholds: (crossed: readonly ThresholdCrossed[]) => context.events.thresholds(crossed), known: context.known, locked: context.lockedUpdates() };
}

function reserve(resolved: ResolvedScope, amounts: ReserveAmounts): ResultAsync<Reservation, KeelError> {
  const valid = validate(ReserveAmountsSchema, amounts, "reserve amounts");
  if (valid.isErr()) return errAsync(valid.error);
  const { context, chain } = resolved;
  const totals = toTotals(valid.value);
  const reservationId = newId();
  const at = context.clock.now();
  return changeLedger<ReserveDecision>(
    context.docs,
    resolved.key,
    (ledger) => {
      const decision = decideReserve(ledger, { root: resolved.root, chain, amounts: totals, reservationId, at });
      return ok({ next: decision.kind === "reserved" ? decision.ledger : undefined, outcome: decision });
    },
    (ledger) => !!ledger && !!own(ledger.open, reservationId),
    foldOf(resolved),
  ).andThen((decision) => {
    const scope = chain[0]!.id;
    if (decision.kind === "refused") {
      context.events.refused(scope, totals, decision.refusal);
      return errAsync(budgetExceeded(scope, decision.refusal));
    }
    context.events.reserved(scope, reservationId, decision.reservation.amounts);
    context.events.thresholds(decision.thresholds);
    return okAsync(createReservationHandle(resolved, reservationId, decision.reservation));
  });
}

function budgetExceeded(scope: string, refusal: Refusal): KeelError {
  const where = refusal.scope === scope ? `its limit` : `the limit of scope "${refusal.scope}"`;
  return new KeelError(
    "budget_exceeded",
    `scope "${scope}" cannot reserve ${refusal.asked} ${refusal.dimension}: ${refusal.remaining} left under ${where} ` +
      `(${refusal.limit}, set by "${refusal.source}"); settle or expire open reservations, or raise that limit`,
    { details: refusalDetails(scope, refusal) },
  );
}

function listOpen(resolved: ResolvedScope, ledger: Ledger | undefined, cutoff: number): ReservationInfo[] {
  const now = resolved.context.clock.now();
  return staleReservations(ledger, resolved.chain[0]!.id, cutoff).map(([id, open]) => reservationInfo(id, open, now));
}

/** The listing of an open reservation `id`, its age taken at `now`. */
function reservationInfo(id: string, open: OpenReservation, now: number): ReservationInfo {
  return { id, scope: open.scope, chain: [...open.chain], amounts: { ...open.amounts }, reservedAt: open.at, ageMs: now - open.at };
}

function findReservation(resolved: ResolvedScope, id: string): ResultAsync<Reservation, KeelError> {
  if (typeof id !== "string" || id.length === 0 || id.length > 128) {
    return errAsync(new KeelError("invalid_input", "reservation id must be a non-empty string of at most 128 characters", { details: { what: "reservation id" } }));
  }
  return load(resolved).andThen((ledger) => {
    const open = ledger ? own(ledger.open, id) : undefined;
    if (open) return okAsync(createReservationHandle(resolved, id, open));
    const decision = decideClose(ledger, { reservationId: id, outcome: "abandoned", actual: {}, at: 0 });
    const logs = resolved.context.logs;
    if (logs && decision.kind === "missing") {
      return findClose(logs, resolved.key, id, resolved.chain[0]!.id).andThen((closed) =>
        errAsync(closeRefusal(resolved, id, closed ? { kind: "already_closed", closed } : { kind: "missing" })),
      );
    }
    return errAsync(closeRefusal(resolved, id, decision.kind === "closed" ? { kind: "missing" } : decision));
  });
}

function expireStale(resolved: ResolvedScope, olderThanMs: number): ResultAsync<ExpireResult, KeelError> {
  const valid = validate(AmountSchema, olderThanMs, "olderThanMs");
  if (valid.isErr()) return errAsync(valid.error);
  const { context } = resolved;
  const at = context.clock.now();
  const scope = resolved.chain[0]!.id;
  if (context.logs) return expireByLog(resolved, context.logs, at - valid.value, at);
  return changeLedger(
    context.docs,
    resolved.key,
    (ledger) => {
      const decision = decideExpire(ledger, { scope, cutoff: at - valid.value, at });
      return ok({ next: decision?.ledger, outcome: { decision, ledger } });
    },
    (ledger, outcome) => !!ledger && (outcome.decision?.expired ?? []).every((expired) => !own(ledger.open, expired.id)),
    { logs: undefined, known: context.known, locked: context.lockedUpdates() },
  ).map(({ decision, ledger }) => {
    for (const expired of decision?.expired ?? []) context.events.settled(expired.reservation.scope, expired.id, expired.settlement);
    context.events.thresholds(decision?.thresholds ?? []);
    const expired = (decision?.expired ?? []).map(({ id, reservation }) => reservationInfo(id, reservation, at));
    return { expired, snapshot: snapshotOf(decision?.ledger ?? ledger, resolved.root, resolved.chain) };
  });
}

/**
 * Expiry with a close log: each stale reservation gets an `expired` close appended (a close
 * already there wins), then one CAS write folds the log into the ledger document.
 */
function expireByLog(resolved: ResolvedScope, logs: LogStore, cutoff: number, at: number): ResultAsync<ExpireResult, KeelError> {
  const { context } = resolved;
  const scope = resolved.chain[0]!.id;
  return load(resolved).andThen((current) => {
    const stale = staleReservations(current, scope, cutoff);
    const expired: ExpiredReservation[] = [];
    let chain: ResultAsync<void, KeelError> = okAsync(undefined);
    for (const [id, reservation] of stale) {
      chain = chain.andThen(() =>
        appendClose(logs, resolved.key, id, { outcome: "expired", actual: {}, at }, context.bufferedCloses()).map((appended) => {
          if (appended.kind === "appended") expired.push({ id, reservation, settlement: chargeFor(reservation.amounts, "expired", {}) });
        }),
      );
    }
    const folded = () => stale.length === 0
      ? okAsync<Ledger | undefined, KeelError>(current)
      : changeLedger(context.docs, resolved.key, (ledger) => ok({ next: ledger, outcome: ledger }), () => true, foldOf(resolved));
    return chain.andThen(folded).map((ledger) => {
      for (const entry of expired) context.events.settled(entry.reservation.scope, entry.id, entry.settlement);
      return {
        expired: expired.map(({ id, reservation }) => reservationInfo(id, reservation, at)),
        snapshot: snapshotOf(ledger, resolved.root, resolved.chain),
      };
    });
  });
}
