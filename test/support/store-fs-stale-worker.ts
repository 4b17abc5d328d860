/**
 * Stale-holder worker: one process holding (or taking) a lease and writing under its fence, line
 * by line on command, so that a test can make a holder whose lease another process took over
 * write afterwards.
 *
 *   acquire <ttlMs> <waitMs>  → `token <n>`
 *   put <n>                   → `put ok <version>` or `put <error code>` (a fenced blind write of { n })
 *   append <id>               → `append ok <lastSeq>` or `append <error code>` (fenced)
 *   delete                    → `delete ok` or `delete <error code>` (a fenced unconditional delete of the log)
 *   exit
 *
 * Usage: store-fs-stale-worker.ts <dir> <holder>
 */
import { createInterface } from "node:readline";
import type { Fence } from "@keel/store";
import { createFsStore } from "@keel/store-fs";

const [dir, holder] = process.argv.slice(2);
if (!dir || !holder) throw new Error("usage: store-fs-stale-worker.ts <dir> <holder>");
const store = createFsStore({ dir });
let fence: Fence | undefined;
const say = (line: string) => process.stdout.write(`${line}\n`);
say("loaded");

for await (const line of createInterface({ input: process.stdin })) {
  const [command, first, second] = line.trim().split(" ");
  if (command === "acquire") {
    const lease = await store.leases.acquire("shared.lease", holder, { ttlMs: Number(first), waitMs: Number(second) });
    if (lease.isErr()) say(`acquire ${lease.error.code}`);
    else {
      fence = { lease: lease.value.name, token: lease.value.token };
      say(`token ${lease.value.token}`);
    }
  } else if (command === "put") {
    const put = await store.docs.put(["shared", "doc"], { n: Number(first), holder }, { unconditional: true, ...(fence ? { fence } : {}) });
    say(put.isOk() ? `put ok ${put.value.version}` : `put ${put.error.code}`);
  } else if (command === "append") {
    const appended = await store.logs.append(["shared", "log"], [{ id: String(first), value: { holder } }], fence ? { fence } : {});
    say(appended.isOk() ? `append ok ${appended.value.lastSeq}` : `append ${appended.error.code}`);
  } else if (command === "delete") {
    const deleted = await store.logs.delete(["shared", "log"], fence ? { fence } : {});
    say(deleted.isOk() ? "delete ok" : `delete ${deleted.error.code}`);
  } else if (command === "exit") {
    break;
  }
}
await store.close();
say("done");
// stdin stays open (the test's pipe): leave without waiting for its end.
process.exit(0);
