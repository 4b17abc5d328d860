import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "./support/store-fs-child.js";

const made: string[] = [];
const workers: Worker[] = [];
afterAll(() => {
  for (const worker of workers) worker.child.kill("SIGKILL");
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Sends one command to a worker and resolves its answer (the next line it prints). */
async function ask(worker: Worker, command: string): Promise<string> {
  const before = worker.lines.length;
  worker.child.stdin!.write(`${command}\n`);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to "${command}" in 30 s; printed ${JSON.stringify(worker.lines)}; stderr ${worker.stderr()}`)), 30_000);
  });
  try {
    await Promise.race([worker.waitForCount(/.*/, before + 1), late]);
  } finally {
    clearTimeout(timer);
  }
  return worker.lines[before]!;
}

async function ready(worker: Worker): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not ready in 60 s; printed ${JSON.stringify(worker.lines)}; stderr ${worker.stderr()}`)), 60_000);
  });
  try {
    await Promise.race([worker.waitFor(/^ready$/), late]);
  } finally {
    clearTimeout(timer);
  }
}

function start(dir: string): Worker {
  const worker = startWorker("test/support/work-session-worker.ts", [dir]);
  workers.push(worker);
  return worker;
}

describe("work sessions across real processes on the filesystem store", () => {
  it("one process opens the session and the other's budgeted turn is admitted; one closes it and the other's is refused; a restarted process sees the session", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-work-session-mp-"));
    made.push(dir);
    const host = start(dir);
    const runner = start(dir);
    await ready(host);
    await ready(runner);

    // Before any session: the runner's budgeted turn is refused.
    expect(await ask(runner, "turn")).toBe("err no_session");
    const opened = await ask(host, "open");
    expect(opened).toMatch(/^opened \S+$/);
    const sessionId = opened.split(" ")[1]!;
    // The runner never cached "no session": it reads the store and is admitted, with no warning.
    expect(await ask(runner, "turn")).toBe(`ok ${sessionId} 0`);
    expect(await ask(runner, "turn")).toBe(`ok ${sessionId} 0`);
    expect(await ask(host, "status")).toBe(`status open ${sessionId} 2`);
    expect(await ask(host, "close")).toBe(`closed ${sessionId} 2`);
    expect(await ask(runner, "turn")).toBe("err no_session");
    expect(await ask(runner, "status")).toBe("status no_session - -");

    // A new session, then the runner is killed and restarted: the new process is admitted at once.
    const reopened = (await ask(host, "open")).split(" ")[1]!;
    expect(reopened).not.toBe(sessionId);
    runner.child.kill("SIGKILL");
    await runner.exited;
    const restarted = start(dir);
    await ready(restarted);
    expect(await ask(restarted, "status")).toBe(`status open ${reopened} 0`);
    expect(await ask(restarted, "turn")).toBe(`ok ${reopened} 0`);
    for (const worker of [host, restarted]) worker.child.stdin!.write("exit\n");
    const exits = await Promise.all([host.exited, restarted.exited]);
    expect(exits.map((exit) => exit.code), host.stderr() + restarted.stderr()).toEqual([0, 0]);
  }, 120_000);
});
