/**
 * The store workload recorded under strace: it creates a store in an empty directory, then
 * rewrites documents (one spanning several 4 KiB pages), appends to logs (two appends at once
 * share a commit), takes and releases a lease, and deletes a document. Before each operation it
 * writes an intent line (`T …`) to the acknowledgement file, after it an acknowledgement (`A …`):
 *
 *   T open                      A open
 *   T put <doc> <n> <version>   A put <doc> <n> <version>
 *   T del <doc> <version>       A del <doc>
 *   T append <log> <batch> <count>   A append <log> <batch>
 *   A lease <token>             A release <token>
 *
 * Usage: node store-workload.mjs <root> <ack file> fs|sqlite
 */
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createSqliteStore } from "@keel/store-sqlite";
import { createAcknowledger } from "./acknowledge.js";
import { docValue, POWER_DOCS, POWER_LEASE, POWER_LOGS, recordValue, storeFile } from "./store-model.js";

const [root, ackFile, kind] = process.argv.slice(2);
if (!root || !ackFile || (kind !== "fs" && kind !== "sqlite")) throw new Error("usage: store-workload <root> <ack file> fs|sqlite");
const say = createAcknowledger(ackFile);
const must = <T>(result: { isErr(): boolean; _unsafeUnwrap(): T; _unsafeUnwrapErr(): unknown }, what: string): T => {
  if (result.isErr()) throw new Error(`${what}: ${JSON.stringify(result._unsafeUnwrapErr())}`);
  return result._unsafeUnwrap();
};

say("T open");
const store: KeelStore = kind === "fs" ? createFsStore({ dir: storeFile(root, kind) }) : createSqliteStore({ file: storeFile(root, kind) });
say("A open");

const versions = new Map<string, number>();
let n = 0;
async function put(name: string): Promise<void> {
  n += 1;
  const current = versions.get(name) ?? 0;
  say(`T put ${name} ${n} ${current + 1}`);
  const written = must(await store.docs.put(["pl", name], docValue(name, n), current === 0 ? { create: true } : { expectedVersion: current }), `put ${name}`);
  versions.set(name, written.version);
  say(`A put ${name} ${n} ${written.version}`);
}

let batches = 0;
async function append(name: string, count: number): Promise<void> {
  const batch = `b${batches++}`;
  say(`T append ${name} ${batch} ${count}`);
  const records = Array.from({ length: count }, (_, index) => ({ id: `${batch}.${index}`, value: recordValue(`${batch}.${index}`) }));
  must(await store.logs.append(["pl", name], records), `append ${name}`);
  say(`A append ${name} ${batch}`);
}

async function lease(): Promise<void> {
  const held = must(await store.leases.acquire(POWER_LEASE, "workload", { ttlMs: 500, waitMs: 5_000 }), "acquire");
  say(`A lease ${held.token}`);
  must(await store.leases.release(held), "release");
  say(`A release ${held.token}`);
}

const [small, big] = POWER_DOCS;
const [first, second] = POWER_LOGS;
for (let round = 0; round < 3; round++) {
  await put(small);
  await put(big);
  await append(first, 1 + round);
  await Promise.all([append(second, 2), append(second, 1)]);
  await lease();
}
const version = versions.get(small)!;
say(`T del ${small} ${version}`);
must(await store.docs.delete(["pl", small], { expectedVersion: version }), "delete");
say(`A del ${small}`);
await put(big);
await store.close();
