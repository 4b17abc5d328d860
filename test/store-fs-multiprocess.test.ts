import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFsStore } from "@keel/store-fs";
import { afterAll, describe, expect, it } from "vitest";
import { repositoryRoot, startWorker, type Worker } from "./support/store-fs-child.js";
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
  it("answers check() of a store opened with create: false, taking no lock, with no torn tail while another process appends", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-multiprocess-quiet-"));
    made.push(dir);
    const seed = createFsStore({ dir });
    (await seed.logs.append(["shared", "log"], [{ id: "seed", value: 0 }]))._unsafeUnwrap();
    await seed.close();
    const batches = 150;
    // A writer in another process: batches of 8 records of ~2 KiB, one write each.
    const code = [
      'const { createFsStore } = await import("@keel/store-fs");',
      `const store = createFsStore({ dir: ${JSON.stringify(dir)} });`,
      'console.log("appending");',
      `for (let batch = 0; batch < ${batches}; batch++) {`,
      '  const records = Array.from({ length: 8 }, (_, index) => ({ id: `b${batch}-${index}`, value: { text: "w".repeat(2000) } }));',
      '  (await store.logs.append(["shared", "log"], records))._unsafeUnwrap();',
      "}",
      "await store.close();",
      'console.log("done");',
    ].join("\n");
    const writer = spawn(process.execPath, ["--import", "tsx", "--conditions=@keel/source", "--input-type=module", "-e", code], { cwd: repositoryRoot, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    writer.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    writer.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => writer.on("close", resolve));
    try {
      while (!output.includes("appending") && writer.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 10));
      let checks = 0;
      while (!output.includes("done") && writer.exitCode === null) {
        const reader = createFsStore({ dir, create: false });
        const report = await reader.check();
        await reader.close();
        expect(report._unsafeUnwrap().problems, output).toEqual([]);
        checks += 1;
        // A quiet check may never leave the microtask queue: let the writer's output and exit in.
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await exited, output).toBe(0);
      expect(checks).toBeGreaterThan(0);
    } finally {
      writer.kill("SIGKILL");
    }
    const reader = createFsStore({ dir, create: false });
    try {
      expect((await reader.logs.head(["shared", "log"]))._unsafeUnwrap()).toEqual({ lastSeq: 1 + batches * 8 });
      expect((await reader.check())._unsafeUnwrap()).toMatchObject({ ok: true, problems: [] });
    } finally {
      await reader.close();
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
