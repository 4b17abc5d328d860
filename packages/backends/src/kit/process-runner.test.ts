import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isProcessAlive, waitForProcessesToExit } from "@keel/testkit/backend";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runProcess, type RunProcessOptions } from "./index.js";

const env = { PATH: process.env.PATH ?? "" };

describe("runProcess: the shared process runner (real child processes)", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "keel-runner-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const node = (code: string, options: Partial<RunProcessOptions> & { extraArgs?: string[] } = {}) => {
    const lines: string[] = [];
    const { extraArgs = [], ...rest } = options;
    const run = runProcess({
      command: process.execPath,
      args: ["-e", code, ...extraArgs],
      cwd: dir,
      env,
      timeoutMs: 20_000,
      onLine: (line) => lines.push(line),
      killGraceMs: 300,
      ...rest,
    });
    return { run, lines };
  };

  it("passes arguments as an array, never through a shell, in cwd with the given env and stdin closed", async () => {
    const { run, lines } = node(
      `let input = "";
       process.stdin.on("data", (chunk) => (input += chunk));
       process.stdin.on("end", () => {
         console.log(JSON.stringify({ args: process.argv.slice(1), cwd: process.cwd(), keel: process.env.KEEL_X, home: process.env.HOME ?? null, input }));
       });`,
      { extraArgs: ["$(touch pwned)", "a b", "*", "; rm -rf /", ""], env: { ...env, KEEL_X: "1" } },
    );
    const exit = (await run)._unsafeUnwrap();
    expect(exit).toMatchObject({ exitCode: 0, signal: null });
    expect(JSON.parse(lines[0]!)).toEqual({ args: ["$(touch pwned)", "a b", "*", "; rm -rf /", ""], cwd: dir, keel: "1", home: null, input: "" });
    expect(existsSync(join(dir, "pwned"))).toBe(false);
  });

  it("splits stdout into lines: LF and CRLF, multi-byte characters across chunks, a last line without newline, huge lines", async () => {
    const { run, lines } = node(
      `const big = "x".repeat(8 * 1024 * 1024);
       process.stdout.write("one\\r\\ntwo\\n");
       const euro = Buffer.from("€uro\\n");
       process.stdout.write(euro.subarray(0, 1));
       setTimeout(() => {
         process.stdout.write(euro.subarray(1));
         process.stdout.write(big + "\\n");
         process.stdout.write("last");
       }, 20);`,
    );
    (await run)._unsafeUnwrap();
    expect(lines.slice(0, 3)).toEqual(["one", "two", "€uro"]);
    expect(lines[3]!.length).toBe(8 * 1024 * 1024);
    expect(lines[4]).toBe("last");
    expect(lines).toHaveLength(5);
  });

  it("stops a line longer than maxLineBytes with too_large and kills the process", async () => {
    const { run } = node(`process.stdout.write("y".repeat(200000)); setInterval(() => {}, 1000);`, { maxLineBytes: 64 * 1024 });
    const error = (await run)._unsafeUnwrapErr();
    expect(error.code).toBe("too_large");
  });

  it("keeps a bounded stderr: the head and the tail", async () => {
    const { run } = node(`process.stderr.write("HEAD" + "e".repeat(1024 * 1024) + "TAIL"); process.exitCode = 3;`, { maxStderrBytes: 8 * 1024 });
    const exit = (await run)._unsafeUnwrap();
    expect(exit.exitCode).toBe(3);
    expect(exit.stderrTruncated).toBe(true);
    expect(exit.stderr.startsWith("HEAD")).toBe(true);
    expect(exit.stderr.endsWith("TAIL")).toBe(true);
    expect(exit.stderr.length).toBeLessThan(9 * 1024);
  });

  it("reports the exit code and the signal of a process that ended on its own", async () => {
    expect((await node(`process.exit(7)`).run)._unsafeUnwrap()).toMatchObject({ exitCode: 7, signal: null });
    expect((await node(`process.kill(process.pid, "SIGKILL")`).run)._unsafeUnwrap()).toMatchObject({ exitCode: null, signal: "SIGKILL" });
  });

  it("on timeout kills the whole process group, escalating to SIGKILL when SIGTERM is ignored", async () => {
    const pids = join(dir, "pids.json");
    const { run, lines } = node(
      `const { spawn } = require("node:child_process");
       const child = spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: "ignore" });
       require("node:fs").writeFileSync(${JSON.stringify(pids)}, JSON.stringify([process.pid, child.pid]));
       process.on("SIGTERM", () => {});
       console.log("started");
       setInterval(() => {}, 1000);`,
      { timeoutMs: 1500 },
    );
    const error = (await run)._unsafeUnwrapErr();
    expect(error.code).toBe("timeout");
    expect(error.details).toMatchObject({ timeoutMs: 1500, signal: "SIGKILL" });
    expect(lines).toEqual(["started"]);
    const spawned = JSON.parse(await readFile(pids, "utf8")) as number[];
    expect(await waitForProcessesToExit(spawned)).toEqual([]);
  });

  it("does not wait forever for a grandchild that keeps stdout open after the process exits, and kills it", async () => {
    const pids = join(dir, "pids.json");
    const { run } = node(
      `const { spawn } = require("node:child_process");
       const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: ["ignore", "inherit", "inherit"] });
       require("node:fs").writeFileSync(${JSON.stringify(pids)}, JSON.stringify([child.pid]));
       console.log("done");
       process.exit(0);`,
    );
    const exit = (await run)._unsafeUnwrap();
    expect(exit.exitCode).toBe(0);
    const spawned = JSON.parse(await readFile(pids, "utf8")) as number[];
    expect(await waitForProcessesToExit(spawned)).toEqual([]);
  });

  it("aborts: before the start nothing runs; during the run the group is killed; aborting twice is harmless", async () => {
    const marker = join(dir, "started");
    const early = new AbortController();
    early.abort();
    const before = node(`require("node:fs").writeFileSync(${JSON.stringify(marker)}, "x")`, { signal: early.signal });
    expect((await before.run)._unsafeUnwrapErr().code).toBe("aborted");
    expect(existsSync(marker)).toBe(false);

    const controller = new AbortController();
    const during = node(`console.log(process.pid); setInterval(() => {}, 1000);`, { signal: controller.signal });
    while (during.lines.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    controller.abort();
    expect((await during.run)._unsafeUnwrapErr().code).toBe("aborted");
    expect(isProcessAlive(Number(during.lines[0]))).toBe(false);

    const after = new AbortController();
    const finished = await node(`console.log("ok")`, { signal: after.signal }).run;
    after.abort();
    expect(finished._unsafeUnwrap().exitCode).toBe(0);
  });

  it("a throwing line handler marks the output corrupt instead of escaping", async () => {
    const error = (
      await runProcess({
        command: process.execPath,
        args: ["-e", `console.log("a"); setInterval(() => {}, 1000)`],
        cwd: dir,
        env,
        timeoutMs: 20_000,
        killGraceMs: 300,
        onLine: () => {
          throw new Error("parser bug");
        },
      })
    )._unsafeUnwrapErr();
    expect(error.code).toBe("corrupt");
  });

  it("classifies a missing or non-executable command as unavailable, a missing cwd and bad options as invalid_input", async () => {
    const base = { args: [], cwd: dir, env, timeoutMs: 5000, onLine: () => {} };
    const missing = (await runProcess({ ...base, command: join(dir, "no-such-cli") }))._unsafeUnwrapErr();
    expect(missing).toMatchObject({ code: "unavailable", retryable: false, details: { reason: "not_installed" } });
    const onPath = (await runProcess({ ...base, command: "keel-no-such-cli-anywhere" }))._unsafeUnwrapErr();
    expect(onPath.code).toBe("unavailable");
    const plain = join(dir, "plain.txt");
    await writeFile(plain, "#!/bin/sh\necho hi\n");
    await chmod(plain, 0o644);
    expect((await runProcess({ ...base, command: plain }))._unsafeUnwrapErr()).toMatchObject({ code: "unavailable", details: { reason: "not_executable" } });
    expect((await runProcess({ ...base, command: process.execPath, cwd: join(dir, "gone") }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await runProcess({ ...base, command: process.execPath, cwd: "relative" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await runProcess({ ...base, command: process.execPath, timeoutMs: 0 }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await runProcess({ ...base, command: process.execPath, args: ["a\0b"] }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
