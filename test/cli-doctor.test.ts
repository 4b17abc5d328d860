import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "@keel/cli";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DoctorReport } from "../packages/cli/src/internal/doctor-report.js";
import { renderDoctorReport } from "../packages/cli/src/internal/doctor-report.js";
import { runDoctor } from "../packages/cli/src/internal/doctor-run.js";
import { ANSI, REPO_ROOT, captureIo, hasStackTrace, spawnKeel, temporaryDirectory } from "./support/cli-harness.js";

let scratch: { dir: string; remove: () => void };
let fakeBin: string;

/** Puts an executable shell script on the fake PATH. */
function fakeCli(name: string, script: string): void {
  const file = path.join(fakeBin, name);
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  chmodSync(file, 0o755);
}

beforeEach(() => {
  scratch = temporaryDirectory("doctor");
  fakeBin = path.join(scratch.dir, "bin");
  mkdirSync(fakeBin);
});
afterEach(() => scratch.remove());

async function doctorJson(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; report: DoctorReport }> {
  const io = captureIo({ cwd: scratch.dir, env });
  const code = await runCli(["doctor", ...args, "--json"], io);
  return { code, report: JSON.parse(io.out) as DoctorReport };
}

describe("keel doctor", () => {
  it("reports installed CLIs with their versions and which resume, and those that are missing or broken", async () => {
    fakeCli("claude", 'echo "2.0.14 (Claude Code)"');
    fakeCli("codex", 'echo "codex: broken install" >&2; exit 3');
    const { code, report } = await doctorJson([], { PATH: fakeBin, DEEPSEEK_API_KEY: "sk-test" });
    expect(code).toBe(0);
    const byId = Object.fromEntries(report.backends.map((backend) => [backend.id, backend]));
    expect(byId["claude-code"]).toMatchObject({ available: true, version: "2.0.14 (Claude Code)", resumable: true, path: path.join(fakeBin, "claude") });
    expect(byId["codex"]).toMatchObject({ available: false, version: "codex: broken install", problem: expect.stringContaining("exited with code 3") });
    expect(byId["gemini"]).toMatchObject({ available: false, path: null });
    expect(byId["deepseek"]).toMatchObject({ available: true, resumable: false, kind: "http" });
    const io = captureIo({ cwd: scratch.dir, env: { PATH: fakeBin } });
    expect(await runCli(["doctor"], io)).toBe(0);
    expect(io.out).toMatch(/^ {2}claude-code +available +2\.0\.14 \(Claude Code\) +resumes +older than proven 2\.1\.197 +.*bin\/claude$/m);
    expect(io.out).toMatch(/^ {2}codex +not available +codex: broken install +resumes +proven with 0\.171\.0 +codex --version exited with code 3$/m);
    expect(io.out).toMatch(/^ {2}deepseek +not available +- +fresh only +recordings only +DEEPSEEK_API_KEY is not set$/m);
    expect(io.out).toContain("Backends: 1 of 10 available, 1 of them resume threads");
  });

  it("says for each installed CLI whether its version is in the range its adapter was proven with", async () => {
    fakeCli("claude", 'echo "2.1.197 (Claude Code)"');
    fakeCli("opencode", 'echo "1.19.2"');
    fakeCli("qodercli", 'echo "1.1.52"');
    const { report } = await doctorJson([], { PATH: fakeBin });
    const byId = Object.fromEntries(report.backends.map((backend) => [backend.id, backend]));
    expect(byId["claude-code"]).toMatchObject({ versionNumber: "2.1.197", versionStanding: "proven", provenAgainst: "real-cli" });
    expect(byId["opencode"]).toMatchObject({ versionNumber: "1.19.2", versionStanding: "newer", provenVersions: { provenWith: "1.18.33", below: "1.19.0" } });
    expect(byId["qoder"]).toMatchObject({ versionNumber: "1.1.52", versionStanding: "unknown", provenAgainst: "recordings", provenVersions: null });
    const io = captureIo({ cwd: scratch.dir, env: { PATH: fakeBin } });
    await runCli(["doctor"], io);
    expect(io.out).toMatch(/^ {2}claude-code +available +2\.1\.197 \(Claude Code\) +resumes +proven 2\.1\.197 /m);
    expect(io.out).toMatch(/^ {2}opencode +available +1\.19\.2 +resumes +newer than proven 1\.18\.33 /m);
    expect(io.out).toMatch(/^ {2}qoder +available +1\.1\.52 +resumes +recordings only /m);
    expect(io.out).toContain("Proven against the real CLI, offline: claude-code 2.1.197, codex 0.171.0, pi 0.73.1, opencode 1.18.33, copilot 1.0.102, gemini 0.61.0");
    expect(io.out).toContain("Proven only against recorded output: cursor, grok, qoder, deepseek");
  });

  it("exits 0 when no CLI is installed: that is information", async () => {
    const { code, report } = await doctorJson([], { PATH: fakeBin });
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.backends.every((backend) => !backend.available)).toBe(true);
    const io = captureIo({ cwd: scratch.dir, env: { PATH: fakeBin } });
    await runCli(["doctor"], io);
    expect(io.out).toContain("no backend is installed");
  });

  it("finds the real pi CLI installed in the workspace", async () => {
    const { report } = await doctorJson([], { PATH: `${path.join(REPO_ROOT, "node_modules", ".bin")}${path.delimiter}${path.dirname(process.execPath)}` });
    const pi = report.backends.find((backend) => backend.id === "pi");
    expect(pi).toMatchObject({ available: true, resumable: true });
    expect(pi?.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("checks the store directory without creating it: a missing one is fine when its parent is writable", async () => {
    const { code, report } = await doctorJson(["--dir", "deep/.keel"], { PATH: fakeBin });
    expect(code).toBe(0);
    expect(report.store).toEqual({ dir: path.join(scratch.dir, "deep", ".keel"), exists: false, isStore: false, checked: scratch.dir, writable: true, problem: null });
    expect((await doctorJson([], { PATH: fakeBin })).report.store).toMatchObject({ dir: path.join(scratch.dir, ".keel"), exists: false });
  });

  it("exits 1 when the store directory cannot be written", async () => {
    writeFileSync(path.join(scratch.dir, "file"), "x");
    const { code, report } = await doctorJson(["--dir", "file/.keel"], { PATH: fakeBin });
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(report.store).toMatchObject({ writable: false, checked: path.join(scratch.dir, "file") });
    const io = captureIo({ cwd: scratch.dir, env: { PATH: fakeBin } });
    expect(await runCli(["doctor", "--dir", "file/.keel"], io)).toBe(1);
    expect(io.out).toMatch(/^FAIL {2}store: /m);
    expect(io.out).toContain("not ready: use a writable --dir");
  });

  it("a Node.js older than 20.19 is not ready", async () => {
    const checked = await runDoctor({ nodeVersion: "18.20.4", dir: scratch.dir, env: { PATH: fakeBin } });
    const report = checked._unsafeUnwrap();
    expect(report.ok).toBe(false);
    expect(report.node).toEqual({ version: "18.20.4", required: ">=20.19.0", ok: false });
    const text = renderDoctorReport(report, { color: false });
    expect(text).toMatch(/^FAIL {2}Node\.js 18\.20\.4 \(Keel needs >=20\.19\.0\)$/m);
    expect(text).toContain("not ready: upgrade Node.js");
  });

  it("colours only when the io asks for colour", async () => {
    const plain = captureIo({ cwd: scratch.dir, env: { PATH: fakeBin } });
    await runCli(["doctor"], plain);
    expect(plain.out).not.toMatch(ANSI);
    const coloured = captureIo({ cwd: scratch.dir, env: { PATH: fakeBin }, color: true });
    await runCli(["doctor"], coloured);
    expect(coloured.out).toMatch(ANSI);
  });

  it("a positional argument, an empty or missing --dir, or an unknown option are usage errors (exit 2)", async () => {
    expect(await runCli(["doctor", "somewhere"], captureIo())).toBe(2);
    expect(await runCli(["doctor", "--dir"], captureIo())).toBe(2);
    expect(await runCli(["doctor", "--dir", ""], captureIo())).toBe(2);
    expect(await runCli(["doctor", "--verbose"], captureIo())).toBe(2);
  });

  it("--help shows the options and an example", async () => {
    const io = captureIo();
    expect(await runCli(["doctor", "--help"], io)).toBe(0);
    for (const option of ["--dir", "--json", "Example:"]) expect(io.out).toContain(option);
  });

  it("the real binary exits 1 without a stack trace for an unwritable directory, and 2 for a bad option", async () => {
    writeFileSync(path.join(scratch.dir, "file"), "x");
    const unwritable = await spawnKeel(["doctor", "--dir", path.join(scratch.dir, "file", ".keel")], { PATH: fakeBin });
    expect(unwritable.code).toBe(1);
    expect(unwritable.stdout).toContain("not ready");
    expect(hasStackTrace(unwritable.stdout + unwritable.stderr)).toBe(false);
    const bad = await spawnKeel(["doctor", "--verbose"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: /);
    expect(hasStackTrace(bad.stderr)).toBe(false);
  });
});
