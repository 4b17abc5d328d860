/**
 * A host that freezes inside a transaction: it reserves on mission scope `mission.<mission>`
 * through the PostgreSQL store's locked update, and stops itself (SIGSTOP) in the middle of it,
 * while the ledger row is locked: the transaction open, idle, the lock held.
 *
 * Prints `ready` once a first reserve + settle went through (the ledger exists), then waits for a
 * line on stdin; prints `stalled` just before it stops. When the test resumes it (SIGCONT) it
 * prints `result <ok | code> <retryable>` for that reserve, then `after <ok | code>` for one more
 * reserve + settle (the host works again on a fresh connection), then `done`.
 *
 * Usage: store-postgres-stalled-worker.ts <connection string> <schema> <mission> <lockTimeoutMs> <idleInTransactionTimeoutMs>
 */
import { createBudget } from "@keel/budget";
import type { DocStore } from "@keel/store";
import { createPostgresStore } from "@keel/store-postgres";

const [connectionString, schema, mission, lockText, idleText] = process.argv.slice(2);
if (!connectionString || !schema || !mission || !lockText || !idleText) throw new Error("usage: store-postgres-stalled-worker.ts <url> <schema> <mission> <lockTimeoutMs> <idleInTransactionTimeoutMs>");
const store = createPostgresStore({ connectionString, schema, poolSize: 1, lockTimeoutMs: Number(lockText), idleInTransactionTimeoutMs: Number(idleText) });

let stallNext = false;
const update: NonNullable<DocStore["update"]> = (key, decide, options) =>
  store.docs.update!(
    key,
    (current) => {
      const decided = decide(current);
      if (stallNext) {
        stallNext = false;
        // Synchronous on a pipe (Linux): the line is out before the process stops.
        process.stdout.write("stalled\n");
        process.kill(process.pid, "SIGSTOP");
      }
      return decided;
    },
    options,
  );
const budget = createBudget({ store: { ...store, docs: { ...store.docs, update } } });
const scope = budget.scope(`mission.${mission}`, { limits: { calls: 1_000, tokens: 1_000_000 } });

const pair = async (): Promise<string> => {
  const reserved = await scope.reserve({ calls: 1, tokens: 10 });
  if (reserved.isErr()) return reserved.error.code;
  const settled = await reserved.value.settle({ tokens: 7 });
  return settled.isOk() ? "ok" : settled.error.code;
};

const warmUp = await pair();
if (warmUp !== "ok") throw new Error(`the first reserve + settle failed: ${warmUp}`);
process.stdout.write("ready\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

stallNext = true;
const frozen = await scope.reserve({ calls: 1, tokens: 10 });
process.stdout.write(`result ${frozen.isOk() ? "ok" : frozen.error.code} ${frozen.isOk() ? "-" : String(frozen.error.retryable)}\n`);
if (frozen.isOk()) await frozen.value.settle({ tokens: 7 });
process.stdout.write(`after ${await pair()}\n`);
await store.close();
process.stdout.write("done\n");
