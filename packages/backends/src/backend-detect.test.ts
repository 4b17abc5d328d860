import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { detectBackends } from "./index.js";

function findPiCli(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js"))) {
    if (dirname(dir) === dir) throw new Error("@mariozechner/pi-coding-agent is not installed");
    dir = dirname(dir);
  }
  return join(dir, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
}

describe("detectBackends", () => {
  let bin: string;
  const script = async (name: string, body: string) => {
    const path = join(bin, name);
    await writeFile(path, body);
    await chmod(path, 0o755);
    return path;
  };
  beforeEach(async () => {
    bin = await mkdtemp(join(tmpdir(), "keel-detect-"));
  });
  afterEach(() => rm(bin, { recursive: true, force: true }));

  it("finds installed CLIs on PATH with their --version, runs the real pi, and reports the rest as missing", async () => {
    await script("claude", `#!${process.execPath}\nconsole.log("2.1.59 (Claude Code)");\n`);
    await script("codex", `#!${process.execPath}\nconsole.error("codex: unexpected argument"); process.exit(2);\n`);
    await script("pi", `#!/bin/sh\nexec "${process.execPath}" "${findPiCli()}" "$@"\n`);
    await writeFile(join(bin, "gemini"), "not executable");
    const elsewhere = join(bin, "elsewhere");
    await mkdir(elsewhere);
    const cursor = join(elsewhere, "my-cursor");
    await writeFile(cursor, `#!${process.execPath}\nconsole.log("\\n  2026.11.20-abc\\n");\n`);
    await chmod(cursor, 0o755);

    const found = (await detectBackends({ env: { PATH: bin, DEEPSEEK_API_KEY: "k" }, commands: { cursor } }))._unsafeUnwrap();
    const byId = Object.fromEntries(found.map((entry) => [entry.id, entry]));
    expect(found.map((entry) => entry.id)).toEqual(["claude-code", "codex", "pi", "opencode", "copilot", "cursor", "gemini", "grok", "qoder", "deepseek"]);
    expect(byId["claude-code"]).toMatchObject({ kind: "cli", available: true, version: "2.1.59 (Claude Code)", path: join(bin, "claude"), resumable: true, problem: null });
    expect(byId.codex).toMatchObject({ available: false, version: "codex: unexpected argument" });
    expect(byId.codex!.problem).toMatch(/exited with code 2/);
    expect(byId.pi).toMatchObject({ available: true, version: "0.73.1" });
    expect(byId.cursor).toMatchObject({ available: true, command: cursor, version: "2026.11.20-abc" });
    expect(byId.gemini).toMatchObject({ available: false, path: null });
    expect(byId.opencode).toMatchObject({ available: false, path: null, version: null });
    expect(byId.deepseek).toMatchObject({ kind: "http", available: true, resumable: false, problem: null });
  });

  it("gives up on a --version that hangs and reports the missing API key", async () => {
    await script("grok", `#!${process.execPath}\nsetInterval(() => {}, 1000);\n`);
    const found = (await detectBackends({ env: { PATH: bin }, timeoutMs: 300 }))._unsafeUnwrap();
    const grok = found.find((entry) => entry.id === "grok")!;
    expect(grok.available).toBe(false);
    expect(grok.problem).toMatch(/--version failed/);
    expect(found.find((entry) => entry.id === "deepseek")).toMatchObject({ available: false, problem: "DEEPSEEK_API_KEY is not set" });
  });

  it("answers bad options with invalid_input", async () => {
    expect((await detectBackends({ commands: { nope: "x" } as never }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await detectBackends({ timeoutMs: -1 }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
