/**
 * Opens one rebuilt crash state of the store workload (store-workload.ts) in a fresh process, as
 * after a reboot, and checks it: the store opens; every acknowledged document is there at its
 * acknowledged version (or the one in flight) and untorn; every acknowledged log batch is there
 * whole and nothing else but the batches in flight; `check()` answers; every document, log and
 * the lease stay writable (a put, an append, an acquire above every token handed out); and after
 * `check({ repair: true })` the store checks clean. Prints `{ failures, checked }` as JSON.
 *
 * Usage: node store-checker.mjs <state root> <ack file> fs|sqlite
 */
import { isDeepStrictEqual } from "node:util";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createSqliteStore } from "@keel/store-sqlite";
import { readAcknowledgements } from "./acknowledge.js";
import { simulateReboot } from "./reboot.js";
import { docValue, POWER_LEASE, recordValue, storeExpectations, storeFile, type DocExpectation, type LogExpectation } from "./store-model.js";

const [root, ackFile, kind] = process.argv.slice(2);
if (!root || !ackFile || (kind !== "fs" && kind !== "sqlite")) throw new Error("usage: store-checker <state root> <ack file> fs|sqlite");
simulateReboot();
const expectations = storeExpectations(readAcknowledgements(ackFile));
const failures: string[] = [];
let checked = 0;
const describe = (error: unknown) => {
  const { code, message } = error as { code?: string; message?: string };
  return `${code ?? "thrown"}: ${message ?? String(error)}`;
};

function matches(read: { version: number; value: unknown } | undefined, outcome: DocExpectation["acknowledged"], name: string): boolean {
  if (outcome === "absent") return read === undefined;
  return read !== undefined && read.version === outcome.version && isDeepStrictEqual(read.value, docValue(name, outcome.n));
}

async function checkDocs(store: KeelStore): Promise<void> {
  for (const [name, expected] of expectations.docs) {
    const read = await store.docs.get(["pl", name]);
    if (read.isErr()) {
      failures.push(`docs.get ${name} failed: ${describe(read.error)}`);
      continue;
    }
    const doc = read.value;
    const outcomes = [expected.acknowledged, ...(expected.pending === undefined ? [] : [expected.pending])];
    if (!outcomes.some((outcome) => matches(doc, outcome, name))) {
      failures.push(`document ${name} reads ${doc ? `version ${doc.version} (${JSON.stringify(doc.value).length} bytes)` : "absent"}; acknowledged ${JSON.stringify(expected.acknowledged)}, in flight ${JSON.stringify(expected.pending ?? "nothing")}`);
    }
    if (expected.acknowledged !== "absent") checked += 1;
  }
}

async function checkLog(store: KeelStore, name: string, expected: LogExpectation): Promise<void> {
  const read = await store.logs.read(["pl", name]);
  if (read.isErr()) return void failures.push(`logs.read ${name} failed: ${describe(read.error)}`);
  const seen = new Map<string, number>();
  for (const record of read.value) {
    const [batch] = record.id.split(".");
    seen.set(batch!, (seen.get(batch!) ?? 0) + 1);
    if (!isDeepStrictEqual(record.value, recordValue(record.id))) failures.push(`log ${name}: record ${record.id} is damaged`);
    if (!expected.acknowledged.has(batch!) && !expected.pending.has(batch!)) failures.push(`log ${name}: record ${record.id} was never written`);
  }
  for (const [batch, count] of expected.acknowledged) {
    checked += 1;
    if (seen.get(batch) !== count) failures.push(`log ${name}: acknowledged batch ${batch} has ${seen.get(batch) ?? 0} of its ${count} records`);
  }
  for (const [batch, count] of expected.pending) {
    if (![0, count].includes(seen.get(batch) ?? 0)) failures.push(`log ${name}: batch ${batch} in flight is not all-or-nothing (${seen.get(batch)} of ${count})`);
  }
}

async function checkWritable(store: KeelStore): Promise<void> {
  for (const name of expectations.docs.keys()) {
    const put = await store.docs.put(["pl", name], docValue(name, 999), { unconditional: true });
    if (put.isErr()) failures.push(`a put to ${name} after the cut failed: ${describe(put.error)}`);
  }
  for (const name of expectations.logs.keys()) {
    const appended = await store.logs.append(["pl", name], [{ id: "after.0", value: recordValue("after.0") }]);
    if (appended.isErr()) failures.push(`an append to ${name} after the cut failed: ${describe(appended.error)}`);
  }
  const current = await store.leases.current(POWER_LEASE);
  if (current.isErr()) failures.push(`leases.current failed: ${describe(current.error)}`);
  const lease = await store.leases.acquire(POWER_LEASE, "checker", { ttlMs: 1_000, waitMs: 3_000 });
  if (lease.isErr()) return void failures.push(`acquiring the lease after the cut failed: ${describe(lease.error)}`);
  checked += expectations.leaseTokens.length;
  const highest = Math.max(0, ...expectations.leaseTokens);
  if (lease.value.token <= highest) failures.push(`the lease handed out token ${lease.value.token} again (${highest} was acknowledged before the cut)`);
  const released = await store.leases.release(lease.value);
  if (released.isErr()) failures.push(`releasing the lease failed: ${describe(released.error)}`);
}

async function checkStoreHealth(store: KeelStore): Promise<void> {
  const repaired = await store.check({ repair: true });
  if (repaired.isErr()) return void failures.push(`check({ repair: true }) failed: ${describe(repaired.error)}`);
  const after = await store.check();
  if (after.isErr()) return void failures.push(`check() after repair failed: ${describe(after.error)}`);
  if (!after.value.ok) failures.push(`check() after repair still finds: ${after.value.problems.map((problem) => `${problem.code} at ${problem.location}: ${problem.message}`).join("; ")}`);
}

let store: KeelStore | undefined;
try {
  store = kind === "fs" ? createFsStore({ dir: storeFile(root, kind) }) : createSqliteStore({ file: storeFile(root, kind) });
} catch (error) {
  failures.push(`the store does not open: ${describe(error)}`);
}
if (store) {
  await checkDocs(store);
  for (const [name, expected] of expectations.logs) await checkLog(store, name, expected);
  const health = await store.check();
  if (health.isErr()) failures.push(`check() failed: ${describe(health.error)}`);
  await checkWritable(store);
  await checkStoreHealth(store);
  await store.close();
}
console.log(JSON.stringify({ failures, checked }));
// Nothing of the store may keep the process alive past its verdict (a background sync timer).
process.exit(0);
