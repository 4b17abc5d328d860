import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { COMMANDS, KEEL_CLI_VERSION, colorEnabled, runCli, type CliCommand, type LazyCliCommand } from "@keel/cli";
import { FAKE_PROVIDER_CLIS } from "@keel/testkit/provider";
import { reportHeadline } from "@keel/telemetry";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO_FAKE_PROVIDER_CLIS } from "../packages/cli/src/commands/demo.js";
import { ANSI, REPO_ROOT, captureIo, hasStackTrace, spawnKeel, temporaryDirectory } from "./support/cli-harness.js";

const BREAK = path.join(REPO_ROOT, "test/support/cli-break-packages.mjs");
const PACKAGE = JSON.parse(readFileSync(path.join(REPO_ROOT, "packages/cli/package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

let scratch: { dir: string; remove: () => void };
beforeEach(() => {
  scratch = temporaryDirectory("conventions");
});
afterEach(() => scratch.remove());

/** Spawned tsx processes, several at once, take seconds each on a loaded machine. */
const SPAWNS = { timeout: 180_000 };

/** Node's own parseArgs wording, which keel must never show. */
const NODE_WORDING = /ERR_PARSE_ARGS|Unknown option '|argument missing|To specify an option argument|This command does not take positional arguments|does not take an argument/;

describe("keel loads its commands lazily", SPAWNS, () => {
  it("--help and --version load no command module and no @keel package (every one of them broken)", async () => {
    const log = path.join(scratch.dir, "loaded.txt");
    const env = { KEEL_TEST_BROKEN: "@keel/*", KEEL_TEST_LOADED_LOG: log };
    const [help, version, short] = await Promise.all([
      spawnKeel(["--help"], env, { imports: [BREAK] }),
      spawnKeel(["--version"], env, { imports: [BREAK] }),
      spawnKeel(["-v"], env, { imports: [BREAK] }),
    ]);
    expect(help.stderr).toBe("");
    expect(help.code).toBe(0);
    for (const command of COMMANDS) expect(help.stdout).toContain(`  ${command.name.padEnd(8)}  ${command.summary}\n`);
    expect(version).toEqual({ code: 0, stdout: `${PACKAGE.version}\n`, stderr: "" });
    expect(short).toEqual(version);
    const loaded = readFileSync(log, "utf8").split("\n").filter((url) => url.includes("/packages/cli/src/"));
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((url) => /\/packages\/cli\/src\/(commands|demo|internal)\/(?!index\.ts$)/.test(url))).toEqual([]);
    expect(readFileSync(log, "utf8")).not.toMatch(/\/packages\/(?!cli\/)[^/]+\/src\/|node_modules\/(zod|neverthrow|@modelcontextprotocol)/);
  });

  it("a broken package breaks only the commands that use it: one line, exit 1, the others still run", async () => {
    const env = { KEEL_TEST_BROKEN: "@keel/workflow" };
    const [mcp, workflow, doctor, inspectHelp] = await Promise.all([
      spawnKeel(["mcp", "--config", "x.json"], env, { imports: [BREAK] }),
      spawnKeel(["workflow", "catalog"], env, { imports: [BREAK] }),
      spawnKeel(["doctor", "--json", "--dir", path.join(scratch.dir, "store")], env, { imports: [BREAK] }),
      spawnKeel(["inspect", "--help"], env, { imports: [BREAK] }),
    ]);
    for (const broken of [mcp, workflow]) {
      expect(broken.code).toBe(1);
      expect(broken.stdout).toBe("");
      expect(broken.stderr).toMatch(/^error \(unavailable\): keel (mcp|workflow) cannot be loaded: Cannot find package '@keel\/workflow[^']*'.*\nThe other commands still work; reinstalling @keel\/cli may mend this one\.\n$/);
      expect(hasStackTrace(broken.stderr)).toBe(false);
    }
    expect(doctor.code).toBe(0);
    expect((JSON.parse(doctor.stdout) as { ok: boolean }).ok).toBe(true);
    expect(inspectHelp.code).toBe(0);
    expect(inspectHelp.stdout).toMatch(/^keel inspect — /);
  });

  it("without the optional peers (the SQL stores, @keel/mcp) the filesystem store works and loads none; what needs one names it", async () => {
    const log = path.join(scratch.dir, "loaded.txt");
    const env = { KEEL_TEST_BROKEN: "@keel/store-sqlite,@keel/store-postgres,@keel/mcp", KEEL_TEST_LOADED_LOG: log };
    const store = path.join(scratch.dir, "store");
    const demo = await spawnKeel(["demo", "--dir", path.join(scratch.dir, "demo"), "--policies", "fresh", "--rounds", "1"], env, { imports: [BREAK] });
    expect(demo.stderr).toBe("");
    expect(demo.code).toBe(0);
    const [copy, inspect, mcp, workflow, sqlite, postgres, sqliteDemo] = await Promise.all([
      spawnKeel(["store", "copy", path.join(scratch.dir, "demo", "store"), store], env, { imports: [BREAK] }),
      spawnKeel(["inspect", path.join(scratch.dir, "demo", "store"), "--json"], env, { imports: [BREAK] }),
      spawnKeel(["mcp", "--config", "x.json"], env, { imports: [BREAK] }),
      spawnKeel(["workflow", "catalog"], env, { imports: [BREAK] }),
      spawnKeel(["inspect", `sqlite:${path.join(scratch.dir, "k.db")}`], env, { imports: [BREAK] }),
      spawnKeel(["store", "copy", path.join(scratch.dir, "demo", "store"), "postgres://keel:secret@127.0.0.1:1/app"], env, { imports: [BREAK] }),
      spawnKeel(["demo", "--dir", path.join(scratch.dir, "sql"), "--store", `sqlite:${path.join(scratch.dir, "d.db")}`, "--policies", "fresh", "--rounds", "1"], env, { imports: [BREAK] }),
    ]);
    expect(copy.code, copy.stderr).toBe(0);
    expect(inspect.code, inspect.stderr).toBe(0);
    // A user of the filesystem store loads no SQL driver and no MCP SDK.
    expect(readFileSync(log, "utf8")).not.toMatch(/better-sqlite3|node_modules\/pg\/|@modelcontextprotocol|\/packages\/(store-sqlite|store-postgres|mcp)\/src\//);
    for (const [result, name] of [
      [mcp, "mcp"],
      [workflow, "workflow"],
    ] as const) {
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`error (unavailable): keel ${name} needs @keel/mcp, an optional peer of @keel/cli that is not installed: npm install @keel/mcp\n`);
    }
    for (const [result, peer] of [
      [sqlite, "@keel/store-sqlite"],
      [postgres, "@keel/store-postgres"],
      [sqliteDemo, "@keel/store-sqlite"],
    ] as const) {
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^error \\(unavailable\\): .*needs ${peer}, which is not installed: npm install ${peer}\n$`, "m"));
      expect(result.stderr).not.toContain("secret");
      expect(hasStackTrace(result.stderr)).toBe(false);
    }
    expect(existsSync(path.join(scratch.dir, "k.db")) || existsSync(path.join(scratch.dir, "d.db"))).toBe(false);
    for (const peer of ["@keel/store-sqlite", "@keel/store-postgres", "@keel/mcp"]) {
      expect(Object.keys(PACKAGE.dependencies)).not.toContain(peer);
      expect(PACKAGE.peerDependenciesMeta?.[peer]?.optional, peer).toBe(true);
    }
  });

  it("the demo runs without @keel/testkit, which only --fake-provider needs; the CLI's runtime dependencies do not include it", async () => {
    const env = { KEEL_TEST_BROKEN: "@keel/testkit" };
    const [demo, fake] = await Promise.all([
      spawnKeel(["demo", "--dir", path.join(scratch.dir, "demo"), "--policies", "fresh", "--rounds", "1"], env, { imports: [BREAK] }),
      spawnKeel(["demo", "--dir", path.join(scratch.dir, "fake"), "--policies", "fresh", "--rounds", "1", "--backend", "pi", "--fake-provider"], env, { imports: [BREAK] }),
    ]);
    expect(demo.stderr).toBe("");
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain("report: ");
    expect(fake.code).toBe(1);
    expect(fake.stderr).toMatch(/^error \(unavailable\): --fake-provider needs @keel\/testkit: install it beside @keel\/cli/);
    expect(hasStackTrace(fake.stderr)).toBe(false);
    expect(Object.keys(PACKAGE.dependencies)).not.toContain("@keel/testkit");
    expect(PACKAGE.peerDependenciesMeta?.["@keel/testkit"]?.optional).toBe(true);
    expect(DEMO_FAKE_PROVIDER_CLIS).toEqual(FAKE_PROVIDER_CLIS);
  });
});

describe("keel's help", SPAWNS, () => {
  it("has a title, usage, options with -h/--help, exit codes and an example for every command, naming every option", async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect(command.name).toBe(entry.name);
      expect(command.summary).toBe(entry.summary);
      const help = command.help;
      expect(help, entry.name).toMatch(new RegExp(`^keel ${entry.name} — \\S`));
      expect(help, entry.name).toMatch(new RegExp(`\\nUsage: keel ${entry.name}\\b`));
      expect(help, entry.name).toMatch(/\nOptions:\n/);
      expect(help, entry.name).toMatch(/\n {2}-h, --help\n/);
      expect(help, entry.name).toMatch(/\nExit codes: 0 /);
      expect(help, entry.name).toMatch(new RegExp(`\\nExample[^\\n]*:\\n {2}\\S[\\s\\S]*\\b${entry.name}\\b`));
      for (const option of Object.keys(command.options)) expect(help, `${entry.name} --${option}`).toContain(`--${option}`);
    }
  });

  it("keel --help lists every command with its summary, the options, colour, exit codes and an example", async () => {
    const io = captureIo();
    expect(await runCli(["--help"], io)).toBe(0);
    expect(io.out).toMatch(/^keel — .*\n\nUsage: keel <command> \[options\]\n\nCommands:\n/);
    for (const heading of ["\nOptions:\n", "NO_COLOR", "FORCE_COLOR", "TERM=dumb", "\nExit codes: 0 ", "\nExample:\n"]) expect(io.out).toContain(heading);
    const bare = captureIo();
    expect(await runCli([], bare)).toBe(2);
    expect(bare.out).toBe(io.out);
  });

  it("the real binary prints a command's help for `keel <command> --help`, `-h` anywhere, and `keel help <command>`", async () => {
    const results = await Promise.all([spawnKeel(["demo", "--help"]), spawnKeel(["demo", "--rounds", "x", "-h"]), spawnKeel(["help", "demo"])]);
    for (const result of results) {
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("");
      expect(result.stdout).toMatch(/^keel demo — replay one scripted mission/);
      expect(result.stdout).toContain("\nExit codes: 0 ");
    }
    expect(new Set(results.map((result) => result.stdout)).size).toBe(1);
  });
});

describe("keel's parse errors", SPAWNS, () => {
  const cases: [string[], string][] = [
    [["demo", "--bogus"], "unknown option --bogus for keel demo"],
    [["inspect", "--jsn"], "unknown option --jsn for keel inspect (did you mean --json?)"],
    [["doctor", "-x"], "unknown option -x for keel doctor"],
    [["demo", "--dir"], "--dir needs a value"],
    [["demo", "--dir", "--json"], "--dir needs a value, got the option --json (write --dir=--json if that is the value)"],
    [["doctor", "--json=yes"], '--json takes no value, got "yes"'],
    [["doctor", "now"], 'keel doctor takes no arguments, got "now"'],
  ];

  it("are Keel's own words, one line and a pointer to the command's help, exit 2 — never Node's", async () => {
    for (const [argv, message] of cases) {
      const io = captureIo({ cwd: scratch.dir });
      expect(await runCli(argv, io), argv.join(" ")).toBe(2);
      expect(io.err).toBe(`error: ${message}\nRun \`keel ${argv[0]} --help\` for its options.\n`);
      expect(io.out).toBe("");
    }
  });

  it("name an unknown command with the closest one, and the real binary prints the same words", async () => {
    const io = captureIo();
    expect(await runCli(["inspct"], io)).toBe(2);
    expect(io.err).toBe('error: unknown command "inspct" (did you mean inspect?)\nRun `keel --help` for the commands.\n');
    const [unknownOption, missingValue, unknownCommand] = await Promise.all([spawnKeel(["demo", "--bogus"]), spawnKeel(["report", "x.jsonl", "--html"]), spawnKeel(["--nope"])]);
    expect(unknownOption).toEqual({ code: 2, stdout: "", stderr: "error: unknown option --bogus for keel demo\nRun `keel demo --help` for its options.\n" });
    expect(missingValue).toEqual({ code: 2, stdout: "", stderr: "error: --html needs a value\nRun `keel report --help` for its options.\n" });
    expect(unknownCommand).toEqual({ code: 2, stdout: "", stderr: "error: unknown option --nope\nRun `keel --help` for the commands.\n" });
    for (const result of [unknownOption, missingValue, unknownCommand]) expect(result.stderr).not.toMatch(NODE_WORDING);
  });
});

describe("keel's colour", SPAWNS, () => {
  it("follows FORCE_COLOR, then NO_COLOR, then TERM=dumb, then whether stdout is a terminal", () => {
    const table: [Record<string, string>, boolean, boolean][] = [
      [{}, true, true],
      [{}, false, false],
      [{ NO_COLOR: "1" }, true, false],
      [{ NO_COLOR: "" }, true, true],
      [{ TERM: "dumb" }, true, false],
      [{ TERM: "xterm-256color" }, true, true],
      [{ FORCE_COLOR: "1" }, false, true],
      [{ FORCE_COLOR: "3", NO_COLOR: "1", TERM: "dumb" }, false, true],
      [{ FORCE_COLOR: "true" }, false, true],
      [{ FORCE_COLOR: "0" }, true, false],
      [{ FORCE_COLOR: "false" }, true, false],
      [{ FORCE_COLOR: "" }, false, false],
      [{ FORCE_COLOR: "", NO_COLOR: "1" }, true, false],
    ];
    for (const [env, terminal, expected] of table) expect(colorEnabled(env, terminal), `${JSON.stringify(env)} on ${terminal ? "a terminal" : "a pipe"}`).toBe(expected);
  });

  it("the real binary: FORCE_COLOR=1 colours into a pipe, FORCE_COLOR=0 does not; on a terminal TERM=dumb and NO_COLOR turn it off", async () => {
    const [forced, forcedOff, terminal, dumb, noColor] = await Promise.all([
      spawnKeel(["nosuch"], { FORCE_COLOR: "1" }),
      spawnKeel(["nosuch"], { FORCE_COLOR: "0", NO_COLOR: undefined }),
      spawnKeel(["nosuch"], { NO_COLOR: undefined, FORCE_COLOR: undefined, TERM: "xterm" }, { terminal: true }),
      spawnKeel(["nosuch"], { NO_COLOR: undefined, FORCE_COLOR: undefined, TERM: "dumb" }, { terminal: true }),
      spawnKeel(["nosuch"], { NO_COLOR: "1", FORCE_COLOR: undefined, TERM: "xterm" }, { terminal: true }),
    ]);
    expect(forced.stderr).toMatch(/^\u001b\[31merror\u001b\[39m: unknown command "nosuch"/);
    expect(forcedOff.stderr).toMatch(/^error: unknown command "nosuch"/);
    expect(terminal.stdout).toMatch(/\u001b\[31merror\u001b\[39m: unknown command "nosuch"/);
    for (const plain of [dumb, noColor]) {
      expect(plain.stdout).toContain('error: unknown command "nosuch"');
      expect(plain.stdout).not.toMatch(ANSI);
    }
    for (const result of [forced, forcedOff, terminal, dumb, noColor]) expect(result.code).toBe(2);
  });
});

describe("keel --json", SPAWNS, () => {
  it("demo --json prints one JSON document with the outcome and the analysis; the progress goes to stderr", async () => {
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["demo", "--dir", "d", "--policies", "fresh,rolling", "--rounds", "2", "--json"], io)).toBe(0);
    const outcome = JSON.parse(io.out) as { dir: string; policies: string[]; rounds: number; backend: string; turns: number; files: Record<string, string>; analysis: { policies: unknown[] } };
    expect(outcome).toMatchObject({ dir: path.join(scratch.dir, "d"), policies: ["fresh", "rolling"], rounds: 2, backend: "scripted", turns: 12 });
    expect(outcome.files.events).toBe(path.join(scratch.dir, "d", "events.jsonl"));
    expect(outcome.analysis.policies).toHaveLength(2);
    expect(io.err).toContain("keel demo: fresh, rolling × 2 rounds on scripted");
    expect(io.err).toMatch(/\[rolling\]\s+round\s+2/);
    const workflow = captureIo({ cwd: scratch.dir });
    expect(await runCli(["demo", "--dir", "w", "--workflow", "review_change", "--json"], workflow)).toBe(0);
    expect(JSON.parse(workflow.out)).toMatchObject({ workflow: "review_change", store: path.join(scratch.dir, "w", "workflow-store"), status: { status: "completed" } });
  });

  it("report --json (the real binary) prints the analysis and the work sessions of an events file", async () => {
    const demo = captureIo({ cwd: scratch.dir });
    expect(await runCli(["demo", "--dir", "d", "--policies", "fresh", "--rounds", "1"], demo)).toBe(0);
    const result = await spawnKeel(["report", path.join(scratch.dir, "d", "events.jsonl"), "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { file: string; torn: unknown; headline: string; analysis: { policies: { policy: string }[] }; workSessions: unknown };
    expect(report.file).toBe(path.join(scratch.dir, "d", "events.jsonl"));
    expect(report.headline).toBe(reportHeadline(report.analysis as never)._unsafeUnwrap());
    expect(report.headline.length).toBeGreaterThan(0);
    expect(report.torn).toBeNull();
    expect(report.analysis.policies.map((row) => row.policy)).toEqual(["fresh"]);
    expect(report.workSessions).toBeTypeOf("object");
  });

  it("store copy --json prints what it copied", async () => {
    const demo = captureIo({ cwd: scratch.dir });
    expect(await runCli(["demo", "--dir", "d", "--policies", "fresh", "--rounds", "1"], demo)).toBe(0);
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["store", "copy", "d/store", "copy", "--json"], io)).toBe(0);
    const copied = JSON.parse(io.out) as { from: string; to: string; documents: number; logs: number; records: number };
    expect(copied).toMatchObject({ from: "d/store", to: "copy" });
    expect(copied.documents).toBeGreaterThan(0);
    expect(copied.records).toBeGreaterThan(0);
  });

  it("every command that prints data has --json (workflow prints JSON always; mcp speaks JSON-RPC)", async () => {
    const loaded: CliCommand[] = await Promise.all(COMMANDS.map((entry: LazyCliCommand) => entry.load()));
    const without = loaded.filter((command) => !("json" in command.options)).map((command) => command.name);
    expect(without).toEqual(["workflow", "mcp"]);
  });
});

describe("keel demo's heartbeat", SPAWNS, () => {
  it("prints a line to stderr every --heartbeat seconds while a turn runs, and none with --heartbeat 0", async () => {
    const bin = path.join(scratch.dir, "bin");
    mkdirSync(bin);
    // A pi that takes a while and then fails: the turn runs long enough for a few beats.
    writeFileSync(path.join(bin, "pi"), "#!/bin/sh\nsleep 2\nexit 3\n");
    chmodSync(path.join(bin, "pi"), 0o755);
    const env = { PATH: `${bin}:${process.env["PATH"] ?? ""}` };
    const args = ["demo", "--backend", "pi", "--policies", "fresh", "--rounds", "1"];
    const [beating, quiet] = await Promise.all([
      spawnKeel([...args, "--dir", path.join(scratch.dir, "a"), "--heartbeat", "0.2"], env),
      spawnKeel([...args, "--dir", path.join(scratch.dir, "b"), "--heartbeat", "0"], env),
    ]);
    expect(beating.code).toBe(1);
    const beats = beating.stderr.split("\n").filter((line) => line.includes("turn running for"));
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats[0]).toMatch(/^\[fresh  \]  round  1  planner   turn running for \d+ s$/);
    expect(beating.stdout).not.toContain("turn running for");
    expect(quiet.code).toBe(1);
    expect(quiet.stderr).not.toContain("turn running for");
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["demo", "--heartbeat", "0.001"], io)).toBe(2);
    expect(io.err).toContain('--heartbeat must be a number of seconds from 0.05 to 3600, or 0 for none, got "0.001"');
  });
});

it("keel --version is the package's version", () => {
  expect(KEEL_CLI_VERSION).toBe(PACKAGE.version);
});
