/**
 * A worker process for the multi-process budget tests and bench. It opens the store `store`
 * names (`fs:<dir>`, `postgres:<schema>`, `postgres-cas:<schema>`: see `budget-store.ts`; a bare
 * directory is `fs:<dir>`), declares scope `shared` with a calls limit, and prints one JSON line
 * with what it was granted and refused, and the longest a reserve took.
 *
 * - `count` mode (a number): makes `count` reservations, settling every other one granted; with
 *   `wait` after the worker's name it first prints `ready` and waits for a line on stdin, as
 *   timed mode does (so that many workers contend from the first reservation on).
 * - timed mode (`for:<ms>`): once connected it prints `ready` and waits for a line on stdin (so
 *   that every worker starts together), then for `ms` reserves and settles pairs, one after
 *   another; the report adds the pairs done and the seconds they took.
 *
 * Usage: node --import tsx --conditions=@keel/source test/support/budget-reserve-worker.ts <store> <limit> <count | for:<ms>> <worker> [wait]
 */
import { createBudget } from "@keel/budget";
import { openWorkerStore } from "./budget-store.js";

const [storeSpec, limitText, countText, worker, start] = process.argv.slice(2);
const limit = Number(limitText);
const { store, close } = openWorkerStore(storeSpec!.includes(":") ? storeSpec! : `fs:${storeSpec}`);
const budget = createBudget({ store });
const shared = budget.scope("shared", { limits: { calls: limit, tokens: limit * 100 } });

const granted: string[] = [];
const refused: { code: string; limitingScope: unknown; dimension: unknown }[] = [];
const failed: { code: string; message: string }[] = [];
/** The longest a reserve took (a wait on the ledger's lock included), in ms. */
let slowestMs = 0;

/** Reserves once (settling when `settle` says so); false when the reservation failed otherwise than by the limit. */
async function reserveOnce(settle: (granted: number) => boolean): Promise<boolean> {
  const asked = performance.now();
  const result = await shared.reserve({ calls: 1, tokens: 10 });
  slowestMs = Math.max(slowestMs, performance.now() - asked);
  if (result.isOk()) {
    granted.push(result.value.id);
    if (settle(granted.length)) {
      const settled = await result.value.settle({ tokens: 7 });
      if (settled.isErr()) failed.push({ code: settled.error.code, message: settled.error.message });
    }
    return true;
  }
  if (result.error.code === "budget_exceeded") {
    refused.push({ code: result.error.code, limitingScope: result.error.details["limitingScope"], dimension: result.error.details["dimension"] });
    return true;
  }
  failed.push({ code: result.error.code, message: result.error.message });
  return false;
}

/** Connects (one read, so that connecting and migrating are not timed), prints `ready`, waits for a line on stdin. */
async function waitForStart(): Promise<void> {
  await shared.snapshot();
  process.stdout.write("ready\n");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  process.stdin.destroy();
}

let timing = {};
if (countText!.startsWith("for:")) {
  await waitForStart();
  const started = performance.now();
  const until = started + Number(countText!.slice(4));
  while (performance.now() < until && failed.length === 0) await reserveOnce(() => true);
  timing = { pairs: granted.length, seconds: (performance.now() - started) / 1000 };
} else {
  if (start === "wait") await waitForStart();
  for (let index = 0; index < Number(countText); index++) await reserveOnce((count) => count % 2 === 0);
}
await close();
process.stdout.write(`${JSON.stringify({ worker, granted, refused, failed, slowestMs: Math.round(slowestMs), ...timing })}\n`);
