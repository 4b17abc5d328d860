import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createBudget, type BudgetScope } from "@keel/budget";
import type { AppendOptions, KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { afterEach, describe, expect, it } from "vitest";

/**
 * Settles appended with `durable: false` (the fs store offers buffered appends) and what a power
 * loss does to them. The loss is simulated on the files of a closed store: the close log loses
 * (is cut or zeroed) what it held after its durable point, as unsynced pages leave it; the ledger
 * document (written durably) keeps what it had. A new store and budget then open the same files.
 */

const made: string[] = [];
const stores: KeelStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openStore(dir: string): KeelStore {
  const store = createFsStore({ dir });
  stores.push(store);
  return store;
}

const LIMITS = { tokens: 1_000_000, calls: 1_000 };
const scopeOn = (store: KeelStore, clock?: { now: () => number }): BudgetScope =>
  createBudget({ store, ...(clock ? { clock } : {}) }).scope("global", { limits: LIMITS });
const closeLog = (dir: string) => path.join(dir, "budget", "global.jsonl");
const ledger = async (store: KeelStore) => (await store.docs.get(["budget", "global"]))._unsafeUnwrap()?.value as Record<string, unknown>;

/** Simulates a power loss on the closed store at `dir`: the close log keeps only its first `durablePoint` bytes, the rest cut or zeroed. */
function losePower(dir: string, durablePoint: number, how: "cut" | "zero"): void {
  const file = closeLog(dir);
  if (how === "cut") {
    truncateSync(file, durablePoint);
    return;
  }
  const bytes = readFileSync(file);
  bytes.fill(0, durablePoint + 7, Math.max(durablePoint + 8, bytes.length - 40));
  writeFileSync(file, bytes);
}

describe("budget settles as buffered appends (one durable write per reserve + settle)", () => {
  it("appends each close with durable: false on a store that offers it, and writes the ledger once per pair", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-budget-buffered-"));
    made.push(dir);
    const inner = openStore(dir);
    expect(inner.capabilities.bufferedAppends).toBe(true);
    const appends: (AppendOptions | undefined)[] = [];
    let puts = 0;
    const store: KeelStore = {
      ...inner,
      docs: { ...inner.docs, put: (...args) => ((puts += 1), inner.docs.put(...args)) },
      logs: { ...inner.logs, append: (log, records, options) => (appends.push(options), inner.logs.append(log, records, options)) },
    };
    const scope = scopeOn(store);
    for (let pair = 0; pair < 5; pair++) {
      const reservation = (await scope.reserve({ tokens: 10, calls: 1 }))._unsafeUnwrap();
      (await reservation.settle({ tokens: 8 }))._unsafeUnwrap();
    }
    expect(puts).toBe(5);
    expect(appends).toEqual(Array.from({ length: 5 }, () => ({ durable: false })));
    expect((await scope.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 0 }, settled: { tokens: 50, calls: 5 }, openReservations: 0 });
    // A store without the capability gets plain (durable) appends.
    const plain: (AppendOptions | undefined)[] = [];
    const { capabilities: _dropped, ...rest } = store;
    const withoutCapability = { ...rest, logs: { ...inner.logs, append: (log: string[], records: never, options?: AppendOptions) => (plain.push(options), inner.logs.append(log, records, options)) } };
    const other = createBudget({ store: withoutCapability as never, keyPrefix: ["budget-plain"] }).scope("global", { limits: LIMITS });
    (await (await other.reserve({ tokens: 1 }))._unsafeUnwrap().settle({ tokens: 1 }))._unsafeUnwrap();
    expect(plain).toEqual([undefined]);
  });

  it("asks the store's capabilities at each close, not when the budget is made (a store opened late)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-budget-late-"));
    made.push(dir);
    let target: KeelStore | undefined;
    const appends: (AppendOptions | undefined)[] = [];
    const opened = () => {
      if (!target) throw new Error("used before it was opened");
      return target;
    };
    const late = {
      docs: { get: (...args: Parameters<KeelStore["docs"]["get"]>) => opened().docs.get(...args), put: (...args: Parameters<KeelStore["docs"]["put"]>) => opened().docs.put(...args), delete: (...args: Parameters<KeelStore["docs"]["delete"]>) => opened().docs.delete(...args), list: (...args: Parameters<KeelStore["docs"]["list"]>) => opened().docs.list(...args) },
      logs: {
        append: (log: string[], records: never, options?: AppendOptions) => (appends.push(options), opened().logs.append(log, records, options)),
        read: (...args: Parameters<KeelStore["logs"]["read"]>) => opened().logs.read(...args),
        head: (...args: Parameters<KeelStore["logs"]["head"]>) => opened().logs.head(...args),
        delete: (...args: Parameters<KeelStore["logs"]["delete"]>) => opened().logs.delete(...args),
        list: (...args: Parameters<KeelStore["logs"]["list"]>) => opened().logs.list(...args),
      },
      get capabilities() {
        return opened().capabilities;
      },
    };
    const scope = createBudget({ store: late as never }).scope("global", { limits: LIMITS });
    target = openStore(dir);
    (await (await scope.reserve({ tokens: 1 }))._unsafeUnwrap().settle({ tokens: 1 }))._unsafeUnwrap();
    expect(appends).toEqual([{ durable: false }]);
  });

  for (const how of ["cut", "zero"] as const) {
    it(`a close lost after its fold (log ${how} by a power loss) stays settled, and a later close at the reused seq is folded, not skipped`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "keel-budget-loss-"));
      made.push(dir);
      const first = openStore(dir);
      const scope = scopeOn(first);
      const r1 = (await scope.reserve({ tokens: 100, calls: 1 }))._unsafeUnwrap();
      (await r1.settle({ tokens: 100 }))._unsafeUnwrap();
      // The first close created the log: durable. Every later close is buffered.
      const durablePoint = statSync(closeLog(dir)).size;
      const r2 = (await scope.reserve({ tokens: 200, calls: 1 }))._unsafeUnwrap();
      (await r2.settle({ tokens: 200 }))._unsafeUnwrap();
      const r3 = (await scope.reserve({ tokens: 300, calls: 1 }))._unsafeUnwrap();
      (await r3.settle({ tokens: 300 }))._unsafeUnwrap();
      const r4 = (await scope.reserve({ tokens: 400, calls: 1 }))._unsafeUnwrap();
      // r4's reserve folded the closes of r2 and r3 (seqs 2 and 3) into the ledger, durably.
      expect(await ledger(first)).toMatchObject({ foldedSeq: 3, foldedId: r3.id });
      await first.close();
      losePower(dir, durablePoint, how);

      const store = openStore(dir);
      const after = scopeOn(store);
      // The ledger is the truth: r2 and r3 stay settled although their closes are gone from the log.
      expect((await after.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 400 }, settled: { tokens: 600, calls: 3 }, openReservations: 1 });
      // r4's settle is appended at seq 2 (the log lost 2 and 3) and counts at once...
      const reopened = (await after.reservation(r4.id))._unsafeUnwrap();
      (await reopened.settle({ tokens: 350 }))._unsafeUnwrap();
      expect((await store.logs.head(["budget", "global"]))._unsafeUnwrap()).toEqual({ lastSeq: 2 });
      expect((await after.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 0 }, settled: { tokens: 1_000, calls: 4 }, openReservations: 0 });
      // ...and the next reserve folds it (the ledger named seq 3 = r3, which is not there any more).
      (await after.reserve({ tokens: 1, calls: 1 }))._unsafeUnwrap();
      expect(await ledger(store)).toMatchObject({ foldedSeq: 2, foldedId: r4.id });
      expect(Object.keys((await ledger(store))["open"] as object)).toHaveLength(1);
      const fresh = scopeOn(openStore(dir));
      expect((await fresh.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 1 }, settled: { tokens: 1_000, calls: 4 }, openReservations: 1 });
      // A reservation whose close was lost after its fold is no longer open: it cannot be closed again.
      expect((await fresh.reservation(r2.id))._unsafeUnwrapErr().code).toBe("not_found");
    });
  }

  it("a close lost before any fold leaves its reservation open and charged in full: settling it again or expiry closes it", async () => {
    let now = 10_000;
    const clock = { now: () => now };
    const dir = mkdtempSync(path.join(tmpdir(), "keel-budget-loss-"));
    made.push(dir);
    const first = openStore(dir);
    const scope = scopeOn(first, clock);
    const r1 = (await scope.reserve({ tokens: 100, calls: 1 }))._unsafeUnwrap();
    (await r1.settle({ tokens: 100 }))._unsafeUnwrap();
    const durablePoint = statSync(closeLog(dir)).size;
    const r2 = (await scope.reserve({ tokens: 200, calls: 1 }))._unsafeUnwrap();
    const r3 = (await scope.reserve({ tokens: 300, calls: 1 }))._unsafeUnwrap();
    (await r2.settle({ tokens: 150 }))._unsafeUnwrap();
    (await r3.settle({ tokens: 250 }))._unsafeUnwrap();
    // Tokens are charged as reserved when fewer were used.
    expect((await scope.snapshot())._unsafeUnwrap()).toMatchObject({ settled: { tokens: 600 }, openReservations: 0 });
    await first.close();
    losePower(dir, durablePoint, "cut");

    const store = openStore(dir);
    const after = scopeOn(store, clock);
    // Both settles are undone: their reservations are open again, charged in full (never less).
    expect((await after.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 500 }, settled: { tokens: 100 }, openReservations: 2 });
    // Settling again succeeds (the caller that knows the actual amounts, e.g. from its journal)...
    (await (await after.reservation(r2.id))._unsafeUnwrap().settle({ tokens: 150 }))._unsafeUnwrap();
    // ...and expiry closes what nobody settles again, charged in full.
    now += 120_000;
    const expired = (await after.expireStale(60_000))._unsafeUnwrap();
    expect(expired.expired.map((entry) => entry.id)).toEqual([r3.id]);
    expect((await after.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 0 }, settled: { tokens: 600, calls: 3 }, openReservations: 0 });
    expect((await r3.settle({ tokens: 1 }))._unsafeUnwrapErr().code).toBe("conflict");
  });
});
