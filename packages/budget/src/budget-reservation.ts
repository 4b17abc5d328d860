import { KeelError, validate } from "@keel/core";
import { errAsync, ok, okAsync, type ResultAsync } from "neverthrow";
import { z } from "zod";
import { AmountSchema, type Totals } from "./budget-dimensions.js";
import { snapshotOf, type SettledSnapshot } from "./budget-snapshot.js";
import type { ResolvedScope } from "./internal/budget-context.js";
import { decideClose, decideFold, type ActualAmounts, type CloseDecision } from "./internal/ledger-rules.js";
import { own, type ClosedOutcome, type Ledger, type OpenReservation } from "./internal/ledger-schema.js";
import { appendClose, findClose } from "./internal/ledger-log.js";
import { changeLedger, loadLedger, rememberLedger } from "./internal/ledger-store.js";

/**
 * Actual amounts reported at settlement. A dimension left out (or `null`) is unknown and is
 * charged as reserved. `calls` is not reported: calls are always charged as reserved.
 */
export interface SettleAmounts {
  /** Tokens used; charged when above the reservation (an overrun), never refunded below it. */
  tokens?: number | null;
  /** Time used; unused reserved time is refunded, more is charged (an overrun). */
  timeMs?: number | null;
  /** Cost as reported; charged as is (above the reservation it is an overrun). */
  costMicroUsd?: number | null;
}

/** zod schema of {@link SettleAmounts}. */
export const SettleAmountsSchema = z.strictObject({
  tokens: AmountSchema.nullable().optional(),
  timeMs: AmountSchema.nullable().optional(),
  costMicroUsd: AmountSchema.nullable().optional(),
});

/**
 * Amounts held against a scope and its ancestors until they are settled (actuals known),
 * abandoned (outcome unknown) or expired. Settled exactly once: a second settle or abandon, from
 * this handle or any other process, is `conflict`.
 */
export interface Reservation {
  /** The reservation id (a ULID), unique in its ledger. */
  readonly id: string;
  /** The scope it was made on. */
  readonly scope: string;
  /** Every scope it is charged to: `scope` first, then its ancestors. */
  readonly chain: readonly string[];
  /** The amounts held, per dimension. */
  readonly amounts: Readonly<Totals>;
  /** When it was made (epoch ms, the budget's clock). */
  readonly reservedAt: number;
  /**
   * Closes the reservation with the actual amounts: tokens are charged as reserved (an actual
   * above is charged too and flagged as an overrun), unused known time is refunded, cost is
   * charged as reported, calls as reserved. Unknown actuals are charged as reserved.
   *
   * Errors: `invalid_input`, `conflict` (already settled, abandoned or expired; not retryable),
   * `not_found` (no such reservation in the ledger), store errors.
   */
  settle(actual?: SettleAmounts): ResultAsync<SettledSnapshot, KeelError>;
  /** Closes the reservation when the outcome is unknown (a crash, an interruption): the whole reservation stays charged. */
  abandon(): ResultAsync<SettledSnapshot, KeelError>;
}

/** Creates the handle of an open reservation. `owner` is the scope handle it is reached through. */
export function createReservationHandle(owner: ResolvedScope, id: string, open: OpenReservation): Reservation {
  // This handle remembers its own close, so a second one is refused even after the ledger forgot it.
  let closedAs: { id: string; scope: string; outcome: ClosedOutcome; at: number } | undefined;
  const close = (outcome: ClosedOutcome, actual: SettleAmounts): ResultAsync<SettledSnapshot, KeelError> => {
    if (closedAs) return errAsync(closeRefusal(owner, id, { kind: "already_closed", closed: closedAs }));
    return closeReservation(owner, id, outcome, actual).map((snapshot) => {
      closedAs = { id, scope: open.scope, outcome, at: owner.context.clock.now() };
      return snapshot;
    });
  };
  return Object.freeze({
    id,
    scope: open.scope,
    chain: Object.freeze([...open.chain]),
    amounts: Object.freeze({ ...open.amounts }),
    reservedAt: open.at,
    settle: (actual: SettleAmounts = {}) => {
      const valid = validate(SettleAmountsSchema, actual, "settle amounts");
      return valid.isErr() ? errAsync(valid.error) : close("settled", valid.value as SettleAmounts);
    },
    abandon: () => close("abandoned", {}),
  });
}

/**
 * Closes reservation `id` in `owner`'s ledger and emits the events: with a close log, by one
 * append to it (folded into the ledger document by the next reserve); without, by one CAS write.
 */
export function closeReservation(
  owner: ResolvedScope,
  id: string,
  outcome: ClosedOutcome,
  actual: SettleAmounts,
): ResultAsync<SettledSnapshot, KeelError> {
  const { context } = owner;
  const at = context.clock.now();
  if (context.logs) return closeByLog(owner, context.logs, id, outcome, actual, at);
  return changeLedger(
    context.docs,
    owner.key,
    (ledger) => {
      const decision = decideClose(ledger, { reservationId: id, outcome, actual, at });
      return ok({ next: decision.kind === "closed" ? decision.ledger : undefined, outcome: decision });
    },
    (ledger, decision) => decision.kind === "closed" && !!ledger && !own(ledger.open, id) && ledger.closed.some((entry) => entry.id === id && entry.outcome === outcome),
    { logs: undefined, known: context.known, locked: context.lockedUpdates() },
  ).andThen((decision) => {
    if (decision.kind !== "closed") return errAsync(closeRefusal(owner, id, decision));
    context.events.settled(decision.reservation.scope, id, decision.settlement);
    context.events.thresholds(decision.thresholds);
    return okAsync({ ...snapshotOf(decision.ledger, owner.root, owner.chain), settlement: decision.settlement });
  });
}

/**
 * Closes by one append to the close log. When this budget knows the ledger (it wrote it last)
 * and the reservation is open in it, the ledger is neither read from the log, validated nor
 * folded again: one read of the document checks that it is still at the known version (a write
 * since, by any process, sends the close to {@link closeFromRead}). The append itself is the
 * condition on the log: another close of the reservation makes it `conflict` (then the close is
 * decided again from a fresh read), and the seq it lands at tells whether other closes came
 * since the known ledger (then the returned snapshot is read fresh, and the known ledger dropped).
 */
function closeByLog(
  owner: ResolvedScope,
  logs: NonNullable<ResolvedScope["context"]["logs"]>,
  id: string,
  outcome: ClosedOutcome,
  actual: SettleAmounts,
  at: number,
): ResultAsync<SettledSnapshot, KeelError> {
  const { context } = owner;
  const location = owner.key.join("/");
  const known = context.known.get(location);
  if (!known || !own(known.view.open, id)) return closeFromRead(owner, logs, id, outcome, actual, at);
  const forget = () => context.known.get(location) === known && context.known.delete(location);
  return context.docs.get(owner.key).andThen((doc): ResultAsync<SettledSnapshot, KeelError> => {
    const decision = decideClose(known.view, { reservationId: id, outcome, actual, at });
    if (!doc || doc.version !== known.doc.version || doc.recovered || decision.kind !== "closed") {
      forget();
      return closeFromRead(owner, logs, id, outcome, actual, at);
    }
    return appendClose(logs, owner.key, id, { outcome, actual, at }, context.bufferedCloses()).andThen((appended) => {
      if (appended.kind === "taken") {
        forget();
        return closeFromRead(owner, logs, id, outcome, actual, at);
      }
      context.events.settled(decision.reservation.scope, id, decision.settlement);
      const settled = (ledger: Ledger | undefined) => ({ ...snapshotOf(ledger, owner.root, owner.chain), settlement: decision.settlement });
      if (appended.seq !== known.logSeq + 1) {
        // Other closes came between (or a retry found this one there): the known view misses them.
        forget();
        // The close is in: a failed read only costs the snapshot its freshness, never the settle.
        return loadLedger(context.docs, logs, owner.key)
          .orElse(() => okAsync<Ledger | undefined, KeelError>(decision.ledger))
          .map(settled);
      }
      if (context.known.get(location) === known) {
        const close = { id, seq: appended.seq, outcome, actual: actual as ActualAmounts, at };
        const view = decideFold(known.view, [close]).ledger!;
        rememberLedger(context.known, location, { ...known, closes: [...known.closes, close], view, logSeq: appended.seq });
      }
      return okAsync(settled(decision.ledger));
    });
  });
}

/** Closes by one append to the close log, decided on the ledger as read now (every close log folded in). */
function closeFromRead(
  owner: ResolvedScope,
  logs: NonNullable<ResolvedScope["context"]["logs"]>,
  id: string,
  outcome: ClosedOutcome,
  actual: SettleAmounts,
  at: number,
): ResultAsync<SettledSnapshot, KeelError> {
  const { context } = owner;
  const refuse = (scope: string): ResultAsync<never, KeelError> =>
    findClose(logs, owner.key, id, scope).andThen((closed) =>
      errAsync(closeRefusal(owner, id, closed ? { kind: "already_closed", closed } : { kind: "missing" })),
    );
  return loadLedger(context.docs, logs, owner.key).andThen((ledger) => {
    const decision = decideClose(ledger, { reservationId: id, outcome, actual, at });
    if (decision.kind !== "closed") return refuse(owner.chain[0]!.id);
    return appendClose(logs, owner.key, id, { outcome, actual, at }, context.bufferedCloses()).andThen((appended) => {
      if (appended.kind === "taken") return refuse(decision.reservation.scope);
      context.events.settled(decision.reservation.scope, id, decision.settlement);
      return okAsync({ ...snapshotOf(decision.ledger, owner.root, owner.chain), settlement: decision.settlement });
    });
  });
}

/** The error for closing a reservation that is not open. */
export function closeRefusal(owner: ResolvedScope, id: string, decision: Exclude<CloseDecision, { kind: "closed" }>): KeelError {
  if (decision.kind === "already_closed") {
    return new KeelError(
      "conflict",
      `reservation ${id} on scope "${decision.closed.scope}" was already ${decision.closed.outcome}: a reservation is settled or abandoned exactly once`,
      { retryable: false, details: { reservationId: id, scope: decision.closed.scope, outcome: decision.closed.outcome } },
    );
  }
  return new KeelError(
    "not_found",
    `reservation ${id} is not open in budget ledger "${owner.root}": it was never made there, or was closed long ago`,
    { details: { reservationId: id, root: owner.root } },
  );
}
