/**
 * What the store workload writes, computable from a name alone (the checker compares every byte
 * it reads back with these), and what its acknowledgement lines promise.
 */
import path from "node:path";

/** The documents, under `["pl", name]`: the second spans several 4 KiB pages. */
export const POWER_DOCS = ["small", "big"] as const;
/** The logs, under `["pl", name]`. */
export const POWER_LOGS = ["first", "second"] as const;
/** The lease the workload takes and releases. */
export const POWER_LEASE = "pl.lease";

/** The store's path below the recorded root: the directory of an fs store, the file of a SQLite store. */
export function storeFile(root: string, kind: "fs" | "sqlite"): string {
  return path.join(root, kind === "fs" ? "store" : "keel.db");
}

/** The value of document `name` at write `n` (the big one about 9 KB). */
export function docValue(name: string, n: number): { name: string; n: number; pad: string } {
  return { name, n, pad: (name === "big" ? "b" : "s").repeat(name === "big" ? 9_000 + n * 7 : 20 + n) };
}

/** The value of log record `id` (one in three about 5 KB, so that appends span pages). */
export function recordValue(id: string): { id: string; pad: string } {
  const size = id.length % 3 === 0 ? 5_000 : 40;
  return { id, pad: "r".repeat(size) };
}

/** A document's possible states after a cut: what was acknowledged, and what the operation in flight would make. */
export interface DocExpectation {
  acknowledged: { n: number; version: number } | "absent";
  /** The operation intended but not acknowledged. */
  pending: { n: number; version: number } | "absent" | undefined;
}

/** A log's records: acknowledged batches must be there whole, pending ones whole or not at all. */
export interface LogExpectation {
  acknowledged: Map<string, number>;
  pending: Map<string, number>;
}

/** What the acknowledgement lines before a cut promise. */
export interface StoreExpectations {
  opened: boolean;
  docs: Map<string, DocExpectation>;
  logs: Map<string, LogExpectation>;
  /** Every lease token the workload was given. */
  leaseTokens: number[];
  /** Operations acknowledged. */
  acknowledged: number;
}

/** Reads acknowledgement lines (see store-workload.ts) into expectations. */
export function storeExpectations(lines: readonly string[]): StoreExpectations {
  const docs = new Map<string, DocExpectation>(POWER_DOCS.map((name) => [name, { acknowledged: "absent", pending: undefined }]));
  const logs = new Map<string, LogExpectation>(POWER_LOGS.map((name) => [name, { acknowledged: new Map(), pending: new Map() }]));
  const expectations: StoreExpectations = { opened: false, docs, logs, leaseTokens: [], acknowledged: 0 };
  for (const line of lines) {
    const [kind, op, a, b, c] = line.split(" ");
    if (kind === "A") expectations.acknowledged += 1;
    if (op === "open" && kind === "A") expectations.opened = true;
    else if (op === "put") docs.get(a!)![kind === "T" ? "pending" : "acknowledged"] = { n: Number(b), version: Number(c) };
    else if (op === "del" && kind === "T") docs.get(a!)!.pending = "absent";
    else if (op === "del") docs.get(a!)!.acknowledged = "absent";
    else if (op === "append" && kind === "T") logs.get(a!)!.pending.set(b!, Number(c));
    else if (op === "append") {
      const log = logs.get(a!)!;
      log.acknowledged.set(b!, log.pending.get(b!)!);
      log.pending.delete(b!);
    } else if (op === "lease") expectations.leaseTokens.push(Number(a));
    if (kind === "A" && (op === "put" || op === "del")) docs.get(a!)!.pending = undefined;
  }
  return expectations;
}
