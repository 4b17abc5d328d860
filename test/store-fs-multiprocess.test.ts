import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFsStore } from "@keel/store-fs";
import { afterAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "./support/store-fs-child.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

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

describe("@keel/store-fs with several processes", () => {
  it("loses no update: 4 processes × 250 CAS increments end at exactly 1,000, and their 1,000 appends are all there", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-multiprocess-"));
    made.push(dir);
    const workers = await runTogether(Array.from({ length: 4 }, (_, index) => startWorker("test/support/store-fs-cas-worker.ts", [dir, `w${index}`, "250"])));
    const conflicts = workers.reduce((sum, worker) => sum + Number(worker.lines.find((line) => line.startsWith("done"))!.split(" ")[1]), 0);

    const store = createFsStore({ dir });
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
      expect((await store.check())._unsafeUnwrap()).toEqual({ ok: true, repaired: [], problems: [], quarantined: [] });
    } finally {
      await store.close();
    }
    // The processes did contend (compare-and-swap conflicts were retried), or the test proves little.
    expect(conflicts).toBeGreaterThan(0);
  }, 120_000);

  it("lets one process at a time hold a lease (released or expired and taken over): 4 processes × 40 fenced blind increments end at exactly 160, no token handed out twice", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-multiprocess-lease-"));
    made.push(dir);
    const workers = await runTogether(Array.from({ length: 4 }, (_, index) => startWorker("test/support/store-fs-lease-worker.ts", [dir, `w${index}`, "40", String(index)])));
    const tokens = workers.flatMap((worker) => worker.lines.filter((line) => line.startsWith("token ")).map((line) => Number(line.slice("token ".length))));
    expect(tokens.length).toBeGreaterThanOrEqual(160);
    // Every acquisition got its own token: a release or an expiry ends it, the next one moves past it.
    expect(new Set(tokens).size).toBe(tokens.length);
    const store = createFsStore({ dir });
    try {
      // A blind write is only as safe as the lease: a second holder at any moment would lose an increment.
      expect((await store.docs.get(["shared", "counter"]))._unsafeUnwrap()?.value).toEqual({ count: 160 });
      expect((await store.check())._unsafeUnwrap()).toEqual({ ok: true, repaired: [], problems: [], quarantined: [] });
    } finally {
      await store.close();
    }
  }, 120_000);

  it("fails a stale holder's fenced writes with lease_lost once another process took its lease over", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-multiprocess-stale-"));
    made.push(dir);
    const stale = startWorker("test/support/store-fs-stale-worker.ts", [dir, "stale"]);
    const taker = startWorker("test/support/store-fs-stale-worker.ts", [dir, "taker"]);
    const ask = async (worker: Worker, command: string, answer: RegExp) => {
      const before = worker.lines.filter((line) => answer.test(line)).length;
      worker.child.stdin!.write(`${command}\n`);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer to "${command}" in 30 s`)), 30_000)));
      try {
        return await Promise.race([worker.waitForCount(answer, before + 1), late]);
      } finally {
        clearTimeout(timer);
      }
    };
    try {
      await Promise.all([stale.waitFor(/^loaded$/), taker.waitFor(/^loaded$/)]);

      const staleToken = Number((await ask(stale, "acquire 300 0", /^(token|acquire) /)).split(" ")[1]);
      expect(await ask(stale, "put 1", /^put /)).toBe("put ok 1");
      expect(await ask(stale, "append a", /^append /)).toBe("append ok 1");
      // The other process waits for the lease to expire and takes it over with a higher token.
      const takerToken = Number((await ask(taker, "acquire 60000 10000", /^(token|acquire) /)).split(" ")[1]);
      expect(takerToken).toBeGreaterThan(staleToken);
      expect(await ask(taker, "put 2", /^put /)).toBe("put ok 2");
      // The stale holder, unaware, writes again: every fenced write is refused and changes nothing.
      expect(await ask(stale, "put 3", /^put /)).toBe("put lease_lost");
      expect(await ask(stale, "append b", /^append /)).toBe("append lease_lost");
      expect(await ask(stale, "delete", /^delete /)).toBe("delete lease_lost");
      for (const worker of [stale, taker]) worker.child.stdin!.write("exit\n");
      await Promise.all([stale.exited, taker.exited]);
    } catch (error) {
      throw new Error(`${String(error)}; stale printed ${JSON.stringify(stale.lines)} (${stale.stderr()}), taker ${JSON.stringify(taker.lines)} (${taker.stderr()})`);
    } finally {
      for (const worker of [stale, taker]) worker.child.kill("SIGKILL");
    }
    const store = createFsStore({ dir });
    try {
      expect((await store.docs.get(["shared", "doc"]))._unsafeUnwrap()).toMatchObject({ version: 2, value: { n: 2, holder: "taker" } });
      expect((await store.logs.read(["shared", "log"]))._unsafeUnwrap().map((record) => record.id)).toEqual(["a"]);
    } finally {
      await store.close();
    }
  }, 120_000);
});
