// A fresh clone has no ../shared beside it: every test that needs the shared real samples must
// skip there, each file printing why, and fail under CI=true (where the folder is always present).
// This runs the fixture-reading test files in a copy of what a clone holds (the files git tracks,
// as they are in the working tree, so an uncommitted change is tested too), in a temporary
// directory with nothing beside it, once without CI and once with CI=true.
//
// The files are found two ways, so that a new one cannot slip past: a test that calls
// `sharedFixtures(` is run in the copy; and no other file may name the shared folder in code.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildOutput, repoRoot } from "./support/run-ts.js";
import { CI_FAILURE, SKIP_NOTICE } from "./support/shared-fixtures.js";

const GUARD = "test/support/shared-fixtures.ts";
const SELF = "test/shared-fixtures-absent.test.ts";

/** The files a clone would hold: tracked ones (as in the working tree) and new ones not ignored. */
function cloneFiles(): string[] {
  const listed = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: repoRoot, encoding: "utf8" });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return [...new Set(listed.stdout.split("\0").filter((file) => file !== "" && existsSync(path.join(repoRoot, file))))];
}

/** A line of code (not a comment) with a string naming the shared folder: `"../shared…"` or `"…shared/fixtures…"`. */
const namesSharedFolder = (line: string) => !/^\s*(\/\/|\/\*|\*)/.test(line) && /["'`][^"'`]*(\.\.\/shared\b|shared\/fixtures)/.test(line);

/**
 * Makes `<clone>/<relative>/node_modules` resolve as the repository's does without copying it:
 * each entry a symlink to what the original resolves to, except the workspace's own packages,
 * which point into the clone (pnpm's links are relative, so a linked folder would lead back to
 * the repository's sources). Vite's caches are left out so the clone keeps its own.
 */
function mirrorNodeModules(clone: string, relative: string): void {
  const from = path.join(repoRoot, relative);
  const to = path.join(clone, relative);
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.name === ".vite" || entry.name === ".vite-temp") continue;
    if (entry.name.startsWith("@") && entry.isDirectory()) {
      mirrorNodeModules(clone, path.join(relative, entry.name));
      continue;
    }
    let target: string;
    try {
      target = realpathSync(path.join(from, entry.name));
    } catch {
      continue; // a dangling link in the original: nothing to mirror
    }
    const inside = path.relative(repoRoot, target);
    const workspace = !inside.startsWith("..") && !inside.split(path.sep).includes("node_modules");
    symlinkSync(workspace ? path.join(clone, inside) : target, path.join(to, entry.name));
  }
}

function run(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<ChildOutput> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 240_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

interface JsonReport {
  numFailedTests: number;
  testResults: { name: string; status: string; message: string; assertionResults: { status: string; title: string }[] }[];
}

const files = cloneFiles();
/** The test files that read the shared fixtures (each goes through the guard). */
const guarded = files.filter((file) => /\.test\.ts$/.test(file) && file !== SELF && readFileSync(path.join(repoRoot, file), "utf8").includes("sharedFixtures(")).sort();

let parent: string;
let clone: string;
/** The two runs, started together in `beforeAll` (they overlap on two cores; each test awaits its own). */
let withoutCi: Promise<ChildOutput & { report: JsonReport }>;
let underCi: Promise<ChildOutput & { report: JsonReport }>;

/** Runs vitest in the clone on the guarded files; `ci` sets CI=true, otherwise CI is unset. */
async function runGuarded(ci: boolean): Promise<ChildOutput & { report: JsonReport }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const key of Object.keys(env)) if (key.startsWith("VITEST") || key === "CI" || key === "KEEL_SHARED_FIXTURES" || key === "FORCE_COLOR") delete env[key];
  if (ci) env["CI"] = "true";
  const reportFile = path.join(parent, `report-${ci ? "ci" : "local"}.json`);
  const vitest = path.join(clone, "node_modules", "vitest", "vitest.mjs");
  const output = await run([vitest, "run", "--reporter=default", "--reporter=json", `--outputFile.json=${reportFile}`, ...guarded], clone, env);
  if (!existsSync(reportFile)) throw new Error(`vitest wrote no report (exit ${output.code})\n${output.stdout}\n${output.stderr}`);
  return { ...output, report: JSON.parse(readFileSync(reportFile, "utf8")) as JsonReport };
}

beforeAll(() => {
  parent = realpathSync(mkdtempSync(path.join(tmpdir(), "keel-fresh-clone-")));
  clone = path.join(parent, "keel");
  for (const file of files) cpSync(path.join(repoRoot, file), path.join(clone, file), { verbatimSymlinks: true });
  mirrorNodeModules(clone, "node_modules");
  for (const name of readdirSync(path.join(repoRoot, "packages"))) {
    if (existsSync(path.join(repoRoot, "packages", name, "node_modules"))) mirrorNodeModules(clone, path.join("packages", name, "node_modules"));
  }
  withoutCi = runGuarded(false);
  underCi = runGuarded(true);
  // Each is awaited by its test; until then a rejection is not unhandled.
  for (const pending of [withoutCi, underCi]) pending.catch(() => undefined);
});
afterAll(async () => {
  await Promise.allSettled([withoutCi, underCi]);
  if (parent !== undefined) rmSync(parent, { recursive: true, force: true });
});

describe("tests on the shared fixtures, in a clone with nothing beside it", () => {
  it("every file that names the shared folder in code goes through the one guard", () => {
    const offenders = files.filter((file) => /\.(ts|mts|js|mjs)$/.test(file) && /^(packages|test|examples|bench)\//.test(file) && file !== GUARD && file !== SELF);
    const naming = offenders.filter((file) => readFileSync(path.join(repoRoot, file), "utf8").split("\n").some(namesSharedFolder));
    expect(naming, "read the shared fixtures through sharedFixtures() of test/support/shared-fixtures.ts").toEqual([]);
    expect(guarded.length).toBeGreaterThanOrEqual(10);
  });

  it("the clone has no shared folder beside it and resolves its workspace packages to itself", () => {
    expect(existsSync(path.join(parent, "shared"))).toBe(false);
    expect(lstatSync(path.join(clone, "node_modules", "@keel", "skills")).isSymbolicLink()).toBe(true);
    expect(realpathSync(path.join(clone, "node_modules", "@keel", "skills"))).toBe(path.join(clone, "packages", "skills"));
    expect(realpathSync(path.join(clone, "packages", "skills", "node_modules", "@keel", "core"))).toBe(path.join(clone, "packages", "core"));
  });

  it("without CI: exit 0, no test failed, each file's tests skipped and the reason printed", async () => {
    const { code, stdout, stderr, report } = await withoutCi;
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(report.numFailedTests).toBe(0);
    expect(report.testResults.map((result) => path.relative(clone, result.name)).sort()).toEqual(guarded);
    for (const result of report.testResults) {
      const file = path.relative(clone, result.name);
      expect(result.status, file).not.toBe("failed");
      expect(result.assertionResults.filter((test) => test.status === "skipped").length, `${file} skipped nothing`).toBeGreaterThan(0);
      expect(result.assertionResults.filter((test) => test.status === "failed"), file).toEqual([]);
      expect(`${stdout}${stderr}`, `${file} printed no reason`).toContain(`| ${file}\n${SKIP_NOTICE}: ${path.join(parent, "shared", "fixtures")}`);
    }
  });

  it("with CI=true: every file fails with the reason", async () => {
    const { code, report } = await underCi;
    expect(code).not.toBe(0);
    expect(report.testResults.map((result) => path.relative(clone, result.name)).sort()).toEqual(guarded);
    for (const result of report.testResults) {
      expect(result.status, result.name).toBe("failed");
      expect(result.message, result.name).toContain(`${CI_FAILURE}: ${path.join(parent, "shared", "fixtures")}`);
    }
  });
});
