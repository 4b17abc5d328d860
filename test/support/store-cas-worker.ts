/**
 * Multi-process worker over a store (see store-open.ts): after a line on stdin ("go"), increments a shared
 * counter document `count` times with compare-and-swap (`updateDoc`), appending one record per
 * increment to a shared log, then prints `done <conflicting tries> <busy errors>` and exits.
 * Any error other than a retried `conflict` fails the worker (so a leaked SQLITE_BUSY would).
 *
 * Usage: store-cas-worker.ts <kind> <location> <schema|-> <worker id> <count>
 */
import { updateDoc } from "@keel/store/kit";
import { openWorkerStore } from "./store-open.js";

const [kind, location, schema, worker, countText] = process.argv.slice(2);
if (!kind || !location || !schema || !worker || !countText) throw new Error("usage: store-cas-worker.ts <kind> <location> <schema|-> <worker id> <count>");
const store = openWorkerStore(kind, location, schema === "-" ? undefined : schema);
process.stdout.write("loaded\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

let tries = 0;
for (let index = 0; index < Number(countText); index++) {
  const updated = await updateDoc<{ count: number }>(
    store.docs,
    ["shared", "counter"],
    (current) => {
      tries++;
      return { count: (current?.value.count ?? 0) + 1 };
    },
    { retries: 100_000 },
  );
  if (updated.isErr()) throw updated.error;
  const appended = await store.logs.append(["shared", "log"], [{ id: `${worker}-${index}`, value: { worker, index } }]);
  if (appended.isErr()) throw appended.error;
}
await store.close();
process.stdout.write(`done ${tries - Number(countText)}\n`);
