/**
 * Multi-process worker over a store (see store-open.ts): after a line on stdin ("go"), makes `count` increments of a shared
 * counter document, each under the shared lease: it reads the counter and writes it back one
 * higher with a blind (unconditional) write fenced by the lease, so that only the lease keeps
 * increments from being lost. Prints `token <n>` per acquisition, then `done`.
 *
 * Usage: store-lease-worker.ts <kind> <location> <schema|-> <worker id> <count> <index>
 */
import { openWorkerStore } from "./store-open.js";

const [kind, location, schema, worker, countText, indexText] = process.argv.slice(2);
if (!kind || !location || !schema || !worker || !countText || indexText === undefined) throw new Error("usage: store-lease-worker.ts <kind> <location> <schema|-> <worker id> <count> <index>");
const store = openWorkerStore(kind, location, schema === "-" ? undefined : schema);
const releases = Number(indexText) % 2 === 1;
process.stdout.write("loaded\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

let done = 0;
for (let round = 0; done < Number(countText); round++) {
  // Every fourth lease of the even workers is left to expire (a short time to live), so that
  // leases are also taken over, not only handed on by release.
  const expires = !releases && round % 4 === 0;
  const acquired = await store.leases.acquire("shared.lease", worker, { ttlMs: expires ? 300 : 60_000, waitMs: 60_000 });
  if (acquired.isErr()) throw acquired.error;
  const lease = acquired.value;
  process.stdout.write(`token ${lease.token}\n`);
  const fence = { lease: lease.name, token: lease.token };
  const current = await store.docs.get(["shared", "counter"]);
  if (current.isErr()) throw current.error;
  const count = ((current.value?.value as { count: number } | undefined)?.count ?? 0) + 1;
  const written = await store.docs.put(["shared", "counter"], { count }, { unconditional: true, fence });
  // A lease that expired before the write (a stalled process) is taken over: the write fails, and is done again.
  if (written.isErr() && written.error.code !== "lease_lost") throw written.error;
  if (written.isOk()) done++;
  if (expires) {
    await new Promise((resolve) => setTimeout(resolve, 310));
  } else {
    const released = await store.leases.release(lease);
    if (released.isErr()) throw released.error;
  }
}
await store.close();
process.stdout.write("done\n");
