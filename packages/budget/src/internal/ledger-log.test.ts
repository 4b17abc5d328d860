import { createMemoryStore } from "@keel/store";
import { describe, expect, it } from "vitest";
import { toTotals } from "../budget-dimensions.js";
import { foldLogged, unfoldedCloses } from "./ledger-log.js";
import { emptyLedger, emptyScopeEntry, type Ledger } from "./ledger-schema.js";

const KEY = ["budget", "global"];
const close = (id: string) => ({ id, value: { outcome: "settled", actual: {}, at: 1, attempt: `a-${id}` } });

/** A ledger with open reservations `open` (10 tokens each) that says it folded the log up to `foldedSeq` = `foldedId`. */
function ledgerWith(open: string[], folded: { seq: number; id: string } | undefined): Ledger {
  const ledger = emptyLedger("global");
  ledger.scopes["global"] = emptyScopeEntry();
  for (const id of open) {
    ledger.open[id] = { scope: "global", chain: ["global"], amounts: toTotals({ tokens: 10 }), at: 1 };
    ledger.scopes["global"]!.reserved.tokens += 10;
  }
  if (folded) {
    ledger.foldedSeq = folded.seq;
    ledger.foldedId = folded.id;
  }
  return ledger;
}

describe("unfolded closes: the log after the ledger's last folded record", () => {
  it("reads the closes after the named record when it is at its seq", async () => {
    const store = createMemoryStore();
    await store.logs.append(KEY, [close("r1"), close("r2"), close("r3")]);
    const closes = (await unfoldedCloses(store.logs, KEY, ledgerWith(["r3"], { seq: 2, id: "r2" })))._unsafeUnwrap();
    expect(closes.map((entry) => [entry.seq, entry.id])).toEqual([[3, "r3"]]);
  });

  it("reads the whole log when another record (or none) holds the named seq: the log lost records after the fold", async () => {
    const store = createMemoryStore();
    // The ledger folded r1..r3, then the log lost r2 and r3; r4 and r5 were appended at seqs 2 and 3.
    await store.logs.append(KEY, [close("r1"), close("r4"), close("r5")]);
    const ledger = ledgerWith(["r4", "r5"], { seq: 3, id: "r3" });
    expect((await unfoldedCloses(store.logs, KEY, ledger))._unsafeUnwrap().map((entry) => entry.id)).toEqual(["r1", "r4", "r5"]);
    const folded = (await foldLogged(store.logs, KEY, ledger))._unsafeUnwrap();
    // r1 is no longer open (folded before): only r4 and r5 count, once.
    expect(folded.folded.map((entry) => entry.id)).toEqual(["r4", "r5"]);
    expect(folded.ledger).toMatchObject({ foldedSeq: 3, foldedId: "r5", open: {} });
    expect(folded.ledger!.scopes["global"]!.settled.tokens).toBe(20);
    // Fewer records than the named seq: the same.
    const short = ledgerWith(["r4"], { seq: 7, id: "r9" });
    const refolded = (await foldLogged(store.logs, KEY, short))._unsafeUnwrap();
    expect(refolded.folded.map((entry) => entry.id)).toEqual(["r4"]);
    expect(refolded.ledger).toMatchObject({ foldedSeq: 3, foldedId: "r5" });
  });

  it("reads from foldedSeq on for a ledger without foldedId (written before it was kept)", async () => {
    const store = createMemoryStore();
    await store.logs.append(KEY, [close("r1"), close("r2")]);
    const ledger = ledgerWith(["r2"], undefined);
    ledger.foldedSeq = 1;
    expect((await unfoldedCloses(store.logs, KEY, ledger))._unsafeUnwrap().map((entry) => entry.id)).toEqual(["r2"]);
  });
});
