/**
 * A process whose lease is taken over while it is stopped: acquires `zombie.lease` with a short
 * TTL, writes once under its fence, prints `holding <token>` and waits for a line on stdin (the
 * test stops it with SIGSTOP meanwhile, lets the lease expire and has another process take it).
 * Then it tries every kind of fenced write and prints `result <operation> <ok|code>` for each.
 *
 * Usage: store-postgres-zombie-worker.ts <connection string> <schema>
 */
import { createPostgresStore } from "@keel/store-postgres";

const [connectionString, schema] = process.argv.slice(2);
if (!connectionString || !schema) throw new Error("usage: store-postgres-zombie-worker.ts <url> <schema>");
const store = createPostgresStore({ connectionString, schema, poolSize: 1 });
const lease = (await store.leases.acquire("zombie.lease", "zombie", { ttlMs: 400 }))._unsafeUnwrap();
const fence = { lease: lease.name, token: lease.token };
(await store.docs.put(["guarded", "doc"], { by: "zombie" }, { create: true, fence }))._unsafeUnwrap();
(await store.logs.append(["guarded", "log"], [{ id: "z0", value: 0 }], { fence }))._unsafeUnwrap();
process.stdout.write(`holding ${lease.token}\n`);
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();
const outcomes: [string, { isOk(): boolean; isErr(): boolean; error?: { code: string } }][] = [
  ["docs.put", await store.docs.put(["guarded", "doc"], { by: "zombie-late" }, { expectedVersion: 1, fence })],
  ["docs.put-new", await store.docs.put(["guarded", "other"], { by: "zombie-late" }, { create: true, fence })],
  ["docs.delete", await store.docs.delete(["guarded", "doc"], { unconditional: true, fence })],
  ["logs.append", await store.logs.append(["guarded", "log"], [{ id: "z1", value: 1 }], { fence })],
  ["logs.delete", await store.logs.delete(["guarded", "log"], { fence })],
  ["leases.renew", await store.leases.renew(lease)],
];
for (const [operation, outcome] of outcomes) process.stdout.write(`result ${operation} ${outcome.isOk() ? "ok" : outcome.error!.code}\n`);
await store.close();
process.stdout.write("done\n");
