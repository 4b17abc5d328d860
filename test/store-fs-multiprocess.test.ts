import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFsStore } from "@keel/store-fs";
import { afterAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "./support/store-fs-child.js";
import { describeMultiProcess } from "./support/store-multiprocess.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describeMultiProcess(
  "@keel/store-fs with several processes",
  async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-multiprocess-"));
    made.push(dir);
    return { kind: "fs", location: dir, schema: "-", open: () => createFsStore({ dir }) };
  },
  async () => {},
);

describe("@keel/store-fs with several processes", () => {
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
