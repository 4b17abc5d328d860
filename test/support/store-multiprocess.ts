/** The multi-process tests every store runs (test/store-fs-multiprocess.test.ts, test/store-sql-multiprocess.test.ts). */
import type { KeelStore } from "@keel/store";
import { describe, expect, it } from "vitest";
import { startWorker, type Worker } from "./store-fs-child.js";
import type { WorkerStoreKind } from "./store-open.js";

/**
 * Lets every worker load, then starts them all at once (so that they really contend), and waits
 * for each to exit with code 0. Returns the workers, their output read.
 */
async function runTogether(workers: Worker[]): Promise<Worker[]> {
  try {
    await Promise.all(workers.map((worker) => worker.waitFor(/^loaded$/)));
    for (const worker of workers) worker.child.stdin!.write("go\n");
    const exits = await Promise.all(workers.map((worker) => worker.exited));
    workers.forEach((worker, index) => expect(exits[index]!.code, worker.stderr()).toBe(0));
    return workers;
  } finally {
    for (const worker of workers) worker.child.kill("SIGKILL");
  }
}

/** The location arguments of a worker: kind, location, schema (or "-"). */
export type StoreTarget = { kind: WorkerStoreKind; location: string; schema: string; open: () => KeelStore };

/** The two multi-process tests (CAS increments, fenced lease increments), run against one store. */
export function describeMultiProcess(title: string, makeTarget: () => Promise<StoreTarget>, dropTarget: (target: StoreTarget) => Promise<void>) {
  describe(title, () => {
    it("loses no update: 4 processes × 250 CAS increments end at exactly 1,000, with 1,000 dense appends", async () => {
      const target = await makeTarget();
      try {
        const args = (index: number) => [target.kind, target.location, target.schema, `w${index}`, "250"];
        const workers = await runTogether(Array.from({ length: 4 }, (_, index) => startWorker("test/support/store-cas-worker.ts", args(index))));
        const conflicts = workers.reduce((sum, worker) => sum + Number(worker.lines.find((line) => line.startsWith("done"))!.split(" ")[1]), 0);
        const store = target.open();
        try {
          const counter = (await store.docs.get(["shared", "counter"]))._unsafeUnwrap();
          expect(counter?.value).toEqual({ count: 1_000 });
          expect(counter?.version).toBe(1_000);
          const records = (await store.logs.read(["shared", "log"]))._unsafeUnwrap();
          expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 1_000 }, (_, index) => index + 1));
          expect(new Set(records.map((record) => record.id)).size).toBe(1_000);
          for (let worker = 0; worker < 4; worker++) {
            const mine = records.filter((record) => record.id.startsWith(`w${worker}-`)).map((record) => (record.value as { index: number }).index);
            expect(mine).toEqual(Array.from({ length: 250 }, (_, index) => index));
          }
          expect((await store.check())._unsafeUnwrap()).toMatchObject({ ok: true, repaired: [], problems: [] });
        } finally {
          await store.close();
        }
        // The processes did contend (compare-and-swap conflicts were retried), or the test proves little.
        expect(conflicts).toBeGreaterThan(0);
      } finally {
        await dropTarget(target);
      }
    }, 180_000);

    it("lets one process at a time hold a lease, released or expired and taken over: 4 × 40 fenced blind increments end at exactly 160", async () => {
      const target = await makeTarget();
      try {
        const args = (index: number) => [target.kind, target.location, target.schema, `w${index}`, "40", String(index)];
        const workers = await runTogether(Array.from({ length: 4 }, (_, index) => startWorker("test/support/store-lease-worker.ts", args(index))));
        const tokens = workers.flatMap((worker) => worker.lines.filter((line) => line.startsWith("token ")).map((line) => Number(line.slice("token ".length))));
        expect(tokens.length).toBeGreaterThanOrEqual(160);
        expect(new Set(tokens).size).toBe(tokens.length);
        const store = target.open();
        try {
          // A blind write is only as safe as the lease: a second holder at any moment would lose an increment.
          expect((await store.docs.get(["shared", "counter"]))._unsafeUnwrap()?.value).toEqual({ count: 160 });
          expect((await store.check())._unsafeUnwrap()).toMatchObject({ ok: true, repaired: [], problems: [] });
        } finally {
          await store.close();
        }
      } finally {
        await dropTarget(target);
      }
    }, 180_000);
  });
}

