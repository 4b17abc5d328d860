import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BUDGET_DIMENSIONS, toTotals, type Totals } from "../budget-dimensions.js";
import { intersectValidLevels } from "../limits-intersect.js";
import { chargeFor, decideClose, decideExpire, decideReserve, usedOf, type ScopeDeclaration } from "./ledger-rules.js";
import { parseLedger, type Ledger } from "./ledger-schema.js";

/** A small tree: global → workflow → task-a / task-b, and global → task-c. */
const PARENTS: Record<string, string[]> = { global: [], workflow: ["global"], "task-a": ["workflow"], "task-b": ["workflow"], "task-c": ["global"] };
const SCOPES = Object.keys(PARENTS);

const limitValue = fc.option(fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 100, max: 1500 })), { nil: undefined, freq: 3 });
const limitsArbitrary = fc.record({ tokens: limitValue, timeMs: limitValue, calls: limitValue, costMicroUsd: limitValue });
const amount = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 150 }));
const amountsArbitrary = fc.record({ tokens: amount, timeMs: amount, calls: fc.integer({ min: 0, max: 3 }), costMicroUsd: amount });

type Operation =
  | { kind: "reserve"; scope: string; amounts: Totals }
  | { kind: "close"; pick: number; outcome: "settled" | "abandoned"; actual: { tokens: number | null; timeMs: number | null; costMicroUsd: number | null } }
  | { kind: "expire"; scope: string };

const actualValue = fc.option(fc.integer({ min: 0, max: 200 }), { nil: null });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("reserve" as const), scope: fc.constantFrom(...SCOPES), amounts: amountsArbitrary }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("close" as const),
      pick: fc.nat(),
      outcome: fc.constantFrom("settled" as const, "abandoned" as const),
      actual: fc.record({ tokens: actualValue, timeMs: actualValue, costMicroUsd: actualValue }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("expire" as const), scope: fc.constantFrom(...SCOPES) }) },
);

function declarations(limits: Record<string, ReturnType<typeof toTotals> | Record<string, number | undefined>>): Record<string, ScopeDeclaration> {
  const result: Record<string, ScopeDeclaration> = {};
  for (const id of SCOPES) {
    result[id] = { id, limits: intersectValidLevels([{ name: id, limits: limits[id] ?? {} }]), parents: PARENTS[id]!, warnAtPercent: [50, 80] };
  }
  return result;
}

function chainOf(id: string, all: Record<string, ScopeDeclaration>): ScopeDeclaration[] {
  const chain = [all[id]!];
  for (const parent of PARENTS[id]!) chain.push(...chainOf(parent, all).filter((entry) => !chain.some((known) => known.id === entry.id)));
  return chain;
}

/** Checks the ledger is valid and every limit holds (overruns aside). */
function checkInvariants(ledger: Ledger | undefined, strict: boolean): void {
  if (!ledger) return;
  expect(parseLedger(JSON.parse(JSON.stringify(ledger)), "test").isOk()).toBe(true);
  for (const entry of Object.values(ledger.scopes)) {
    for (const dimension of BUDGET_DIMENSIONS) {
      const limit = entry.limits[dimension];
      if (!limit) continue;
      expect(usedOf(entry, dimension) - entry.overrun[dimension]).toBeLessThanOrEqual(limit.limit);
      if (strict) expect(usedOf(entry, dimension)).toBeLessThanOrEqual(limit.limit);
    }
  }
}

/** Runs operations through the pure rules, checking invariants after each. */
const coverage = { reserved: 0, refused: 0, closed: 0, expired: 0, overruns: 0 };

function run(allLimits: Record<string, Record<string, number | undefined>>, operations: Operation[], capActuals: boolean): void {
  const all = declarations(allLimits);
  let ledger: Ledger | undefined;
  let at = 0;
  let sequence = 0;
  for (const op of operations) {
    at += 10;
    if (op.kind === "reserve") {
      const chain = chainOf(op.scope, all);
      const decision = decideReserve(ledger, { root: "global", chain, amounts: op.amounts, reservationId: `r${sequence++}`, at });
      if (decision.kind === "refused") {
        coverage.refused += 1;
        checkRefusal(ledger, chain, op.amounts, decision.refusal);
      } else {
        coverage.reserved += 1;
        ledger = decision.ledger;
      }
    } else if (op.kind === "close") {
      const ids = Object.keys(ledger?.open ?? {});
      if (ids.length === 0) continue;
      const id = ids[op.pick % ids.length]!;
      const reserved = ledger!.open[id]!.amounts;
      const actual = capActuals
        ? { tokens: op.actual.tokens === null ? null : Math.min(op.actual.tokens, reserved.tokens), timeMs: op.actual.timeMs === null ? null : Math.min(op.actual.timeMs, reserved.timeMs), costMicroUsd: op.actual.costMicroUsd === null ? null : Math.min(op.actual.costMicroUsd, reserved.costMicroUsd) }
        : op.actual;
      const decision = decideClose(ledger, { reservationId: id, outcome: op.outcome, actual, at });
      expect(decision.kind).toBe("closed");
      if (decision.kind !== "closed") continue;
      checkSettlement(decision.settlement, reserved, op.outcome, actual);
      coverage.closed += 1;
      if (BUDGET_DIMENSIONS.some((dimension) => decision.settlement.overrun[dimension] > 0)) coverage.overruns += 1;
      ledger = decision.ledger;
      expect(decideClose(ledger, { reservationId: id, outcome: "settled", actual: {}, at }).kind).toBe("already_closed");
    } else {
      const decision = decideExpire(ledger, { scope: op.scope, cutoff: at - 20, at });
      if (decision) {
        for (const expired of decision.expired) expect(expired.settlement.charged).toEqual(expired.reservation.amounts);
        coverage.expired += decision.expired.length;
        ledger = decision.ledger;
      }
    }
    checkInvariants(ledger, capActuals);
  }
}

function checkRefusal(ledger: Ledger | undefined, chain: ScopeDeclaration[], amounts: Totals, refusal: { scope: string; dimension: string; asked: number; remaining: number; violations: { scope: string; dimension: string; remaining: number }[] }): void {
  // The limiting scope is always reported: a scope of the chain, short of room in that dimension…
  expect(chain.map((entry) => entry.id)).toContain(refusal.scope);
  expect(refusal.asked).toBe(amounts[refusal.dimension as keyof Totals]);
  expect(refusal.remaining).toBeLessThan(refusal.asked);
  const entry = ledger?.scopes[refusal.scope];
  const limit = chain.find((declaration) => declaration.id === refusal.scope)!.limits[refusal.dimension as keyof Totals]!.limit;
  const used = entry ? usedOf(entry, refusal.dimension as keyof Totals) : 0;
  expect(refusal.remaining).toBe(Math.max(0, limit - used));
  // …and the one with the least room among the violations of that dimension.
  for (const violation of refusal.violations.filter((other) => other.dimension === refusal.dimension)) {
    expect(refusal.remaining).toBeLessThanOrEqual(violation.remaining);
  }
}

function checkSettlement(
  settlement: ReturnType<typeof chargeFor>,
  reserved: Totals,
  outcome: "settled" | "abandoned",
  actual: { tokens: number | null; timeMs: number | null; costMicroUsd: number | null },
): void {
  // Refunds only of time (and of a reported cost below the reservation, charged as reported).
  expect(settlement.refunded.tokens).toBe(0);
  expect(settlement.refunded.calls).toBe(0);
  expect(settlement.charged.calls).toBe(reserved.calls);
  if (outcome === "abandoned") {
    expect(settlement.charged).toEqual(reserved);
    return;
  }
  expect(settlement.charged.tokens).toBe(Math.max(reserved.tokens, actual.tokens ?? 0));
  expect(settlement.charged.timeMs).toBe(actual.timeMs ?? reserved.timeMs);
  expect(settlement.charged.costMicroUsd).toBe(actual.costMicroUsd ?? reserved.costMicroUsd);
  if (actual.costMicroUsd === null) expect(settlement.refunded.costMicroUsd).toBe(0);
  if (actual.timeMs === null) expect(settlement.refunded.timeMs).toBe(0);
}

const scenario = fc.record({
  limits: fc.record(Object.fromEntries(SCOPES.map((id) => [id, limitsArbitrary]))),
  operations: fc.array(operation, { minLength: 5, maxLength: 40 }),
});

describe("ledger rules (pure)", () => {
  it("never goes above a limit after any sequence of reserve/settle/abandon/expire when actuals stay within reservations", () => {
    fc.assert(fc.property(scenario, ({ limits, operations }) => run(limits, operations, true)), { numRuns: 300 });
  });

  it("goes above a limit only by the overruns it flags", () => {
    fc.assert(fc.property(scenario, ({ limits, operations }) => run(limits, operations, false)), { numRuns: 300 });
  });

  it("the generated sequences exercise every path (reserve, refuse, close, expire, overrun)", () => {
    for (const count of Object.values(coverage)) expect(count).toBeGreaterThan(50);
  });

  it("charges tokens as reserved, refunds unused known time, charges cost as reported, calls as reserved", () => {
    const reserved = toTotals({ tokens: 1000, timeMs: 60_000, calls: 1, costMicroUsd: 20_000 });
    expect(chargeFor(reserved, "settled", { tokens: 400, timeMs: 15_000, costMicroUsd: 12_000 })).toEqual({
      outcome: "settled",
      reserved,
      charged: { tokens: 1000, timeMs: 15_000, calls: 1, costMicroUsd: 12_000 },
      refunded: { tokens: 0, timeMs: 45_000, calls: 0, costMicroUsd: 8_000 },
      overrun: { tokens: 0, timeMs: 0, calls: 0, costMicroUsd: 0 },
    });
    const over = chargeFor(reserved, "settled", { tokens: 1500, timeMs: null, costMicroUsd: null });
    expect(over.charged).toEqual({ tokens: 1500, timeMs: 60_000, calls: 1, costMicroUsd: 20_000 });
    expect(over.overrun).toEqual({ tokens: 500, timeMs: 0, calls: 0, costMicroUsd: 0 });
    expect(chargeFor(reserved, "abandoned", { tokens: 1 }).charged).toEqual(reserved);
  });

  it("reserves all or nothing across the chain: a refusal at the root leaves every scope untouched", () => {
    const all = declarations({ global: { tokens: 100 }, workflow: { tokens: 1000 }, "task-a": {} });
    const first = decideReserve(undefined, { root: "global", chain: chainOf("task-a", all), amounts: toTotals({ tokens: 80 }), reservationId: "r1", at: 1 });
    expect(first.kind).toBe("reserved");
    if (first.kind !== "reserved") return;
    const second = decideReserve(first.ledger, { root: "global", chain: chainOf("task-b", all), amounts: toTotals({ tokens: 30 }), reservationId: "r2", at: 2 });
    expect(second.kind).toBe("refused");
    if (second.kind !== "refused") return;
    expect(second.refusal).toMatchObject({ scope: "global", dimension: "tokens", asked: 30, remaining: 20, limit: 100, source: "global" });
    expect(first.ledger.scopes["task-b"]).toBeUndefined();
  });
});
