import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildOutput, repoRoot } from "./support/run-ts.js";

// What a user gets from the registry: every package built and packed by pnpm (workspace: and
// catalog: ranges resolved), linted as a tarball, installed into a fresh TypeScript project from
// the README's install line, with npm and again with pnpm, and the README's examples
// type-checked there under NodeNext and run. Third-party dependencies come from the npm
// registry, as in any install.

const pnpm = ["--yes", "pnpm@12.4.2"];
const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
const attw = join(repoRoot, "node_modules", "@arethetypeswrong", "cli", "dist", "index.js");

function run(command: string, args: readonly string[], cwd: string, timeoutMs = 240_000): Promise<ChildOutput> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** Fails with the command's output when it did not exit 0. */
async function runOk(command: string, args: readonly string[], cwd: string, timeoutMs?: number): Promise<ChildOutput> {
  const output = await run(command, args, cwd, timeoutMs);
  if (output.code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${output.code}\n${output.stdout}\n${output.stderr}`);
  return output;
}

/**
 * The README's `npm install` line, and the runnable TypeScript examples of the README and of
 * docs/getting-started.md (which starts from the same line), by file name.
 */
async function readReadme(): Promise<{ install: string[]; examples: Map<string, string> }> {
  const readme = await readFile(join(repoRoot, "README.md"), "utf8");
  const line = /<!-- install[^>]*-->\s*```sh\n(npm install [^\n]+)\n```/.exec(readme)?.[1];
  if (line === undefined) throw new Error("the README has no <!-- install --> block with an npm install line");
  const guide = await readFile(join(repoRoot, "docs", "getting-started.md"), "utf8");
  if (!guide.includes(`\n${line}\n`)) throw new Error("docs/getting-started.md does not install with the README's npm line");
  const examples = new Map<string, string>();
  for (const [prefix, text] of [["readme", readme], ["guide", guide]] as const) {
    for (const match of text.matchAll(/<!-- example:([\w-]+)[^>]*-->\s*```ts\n([\s\S]*?)^```/gm)) examples.set(`${prefix}-${match[1]!}`, match[2]!);
  }
  return { install: line.split(/\s+/).slice(2), examples };
}

/** The package a bare import specifier names (`@keel/backends/scripted` → `@keel/backends`). */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** The packages a source imports (Node's built-ins, `node:*`, need no install). */
function importsOf(source: string): string[] {
  return [...source.matchAll(/^import[^"']*["']([^"'.][^"']*)["']/gm)]
    .map((match) => match[1]!)
    .filter((specifier) => !specifier.startsWith("node:"))
    .map(packageOf);
}

let work = "";
/** Package name → its tarball. */
const tarballs = new Map<string, string>();

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "keel-pack-"));
  // The build is most of the time: one tsc -b, then tsup per package (about 75 s of CPU).
  await runOk("npx", [...pnpm, "run", "build"], repoRoot, 840_000);
  const packs = join(work, "packs");
  await mkdir(packs);
  await runOk("npx", [...pnpm, "-r", "--filter", "./packages/*", "pack", "--pack-destination", packs], repoRoot);
  for (const directory of await readdir(join(repoRoot, "packages"))) {
    const manifest = JSON.parse(await readFile(join(repoRoot, "packages", directory, "package.json"), "utf8")) as { name: string; version: string };
    tarballs.set(manifest.name, join(packs, `${manifest.name.slice(1).replace("/", "-")}-${manifest.version}.tgz`));
  }
}, 900_000);

afterAll(async () => {
  if (work !== "") await rm(work, { recursive: true, force: true });
});

describe("the packed packages", () => {
  it("pass publint --strict", async () => {
    expect(tarballs.size).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const [name, file] of tarballs) {
      const data = await readFile(file);
      const tarball = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
      const { messages, pkg } = await publint({ pack: { tarball }, strict: true });
      for (const message of messages) problems.push(`${name}: ${message.type} ${message.code}: ${formatMessage(message, pkg) ?? ""}`);
    }
    expect(problems).toEqual([]);
  });

  it("have no type problems under @arethetypeswrong/cli's esm-only profile", async () => {
    const names = [...tarballs.keys()];
    const failures: string[] = [];
    // Two at a time: each run loads TypeScript, which is CPU-bound.
    const next = async (): Promise<void> => {
      const name = names.shift();
      if (name === undefined) return;
      const output = await run(process.execPath, [attw, tarballs.get(name)!, "--profile", "esm-only", "--no-definitely-typed", "--format", "ascii", "--no-emoji", "--no-color"], work);
      if (output.code !== 0) failures.push(`${name} (exit ${output.code}):\n${output.stdout}${output.stderr}`);
      await next();
    };
    await Promise.all([next(), next()]);
    expect(failures.join("\n")).toBe("");
  }, 900_000);

  it("install from the README's npm line into a NodeNext project, where the README's examples type-check and run", async () => {
    await consume("npm");
  }, 900_000);

  it("install the same packages with pnpm (`pnpm add` of the README's line), where the examples type-check and run", async () => {
    await consume("pnpm");
  }, 900_000);

  it("install each package README's own line, where its example type-checks and runs", async () => {
    const failures: string[] = [];
    for (const example of packageExamples) {
      const failure = await consumePackageExample(example);
      if (failure !== null) failures.push(failure);
    }
    expect(failures.join("\n\n")).toBe("");
  }, 900_000);
});

/**
 * The package READMEs whose example runs on its own (no server, no CLI, no native build), by the
 * index of its `ts` block. Left out: the SQL stores (a native build, a database server), the
 * framework bridges and `@keel/mcp` (run in the repository by their README tests), `@keel/cli`
 * (its example opens SQLite) and `@keel/testkit` (its examples are vitest suites). `@keel/backends`
 * runs its second block, the scripted backend (the first runs the Codex CLI).
 */
const packageExamples: readonly { directory: string; block: number; skipLibCheck?: boolean }[] = [
  { directory: "core", block: 0 },
  { directory: "backend", block: 0 },
  { directory: "backends", block: 1 },
  { directory: "store", block: 0 },
  { directory: "store-fs", block: 0 },
  { directory: "budget", block: 0 },
  { directory: "sessions", block: 0 },
  { directory: "skills", block: 0 },
  { directory: "transcript", block: 0 },
  { directory: "workflow", block: 0 },
  { directory: "runtime", block: 0 },
  { directory: "telemetry", block: 0 },
  { directory: "otel", block: 0 },
  // `ai`'s own declarations do not compile under strict lib checking (they name the DOM's fetch
  // types and an untyped json-schema): its users skip lib checks, so this example does too.
  { directory: "ai-sdk", block: 0, skipLibCheck: true },
];

/** A `pnpm add` word as a name and a range: `@opentelemetry/api@1.9` → [`@opentelemetry/api`, `1.9`]; no range is `*`. */
function installSpec(word: string): [name: string, range: string] {
  const at = word.indexOf("@", word.startsWith("@") ? 1 : 0);
  return at === -1 ? [word, "*"] : [word.slice(0, at), word.slice(at + 1)];
}

/**
 * Installs one package README's `pnpm add` line with npm into a fresh NodeNext project and runs
 * its example there; the failure as text, or `null`.
 */
async function consumePackageExample({ directory, block, skipLibCheck = false }: { directory: string; block: number; skipLibCheck?: boolean }): Promise<string | null> {
  const readme = await readFile(join(repoRoot, "packages", directory, "README.md"), "utf8");
  const line = /```sh\n(?:[^`]*\n)?pnpm add ([^\n]+)\n/.exec(readme)?.[1];
  if (line === undefined) return `${directory}: the README has no pnpm add line`;
  const specs = line
    .split(/\s+/)
    .filter((word) => word !== "" && !word.startsWith("-"))
    .map(installSpec);
  const install = specs.map(([name]) => name);
  // A block ends at a fence that starts a line: backticks inside the code (a string holding a
  // fenced diff) do not close it.
  const source = [...readme.matchAll(/^```ts\n([\s\S]*?)^```/gm)][block]?.[1];
  if (source === undefined) return `${directory}: the README has no ts block ${block}`;
  const missing = importsOf(source).filter((name) => !install.includes(name));
  if (missing.length > 0) return `${directory}: the example imports ${missing.join(", ")}, which its install line does not install`;

  const consumer = join(work, `package-${directory}`);
  await mkdir(consumer);
  const dependencies = Object.fromEntries(specs.map(([name, range]) => [name, tarballs.has(name) ? `file:${tarballs.get(name)!}` : range]));
  const overrides = Object.fromEntries([...tarballs].filter(([name]) => !install.includes(name)).map(([name, file]) => [name, `file:${file}`]));
  await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies, overrides }, null, 2));
  const installed = await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], consumer);
  if (installed.code !== 0) return `${directory}: npm install exited ${installed.code}\n${installed.stderr}`;
  await writeFile(
    join(consumer, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { target: "ES2022", lib: ["ES2023"], skipLibCheck, module: "NodeNext", moduleResolution: "NodeNext", strict: true, outDir: "out", typeRoots: [join(repoRoot, "node_modules", "@types")], types: ["node"] },
      include: ["*.ts"],
    }),
  );
  await writeFile(join(consumer, "example.ts"), source);
  const check = await run(process.execPath, [tsc, "-p", "tsconfig.json"], consumer);
  if (check.code !== 0) return `${directory}: the example does not type-check\n${check.stdout}${check.stderr}`;
  const output = await run(process.execPath, ["out/example.js"], consumer, 60_000);
  if (output.code !== 0 || output.stderr !== "") return `${directory}: the example exited ${output.code}\n${output.stderr}`;
  return null;
}

/**
 * Installs the README's install line with `manager` into a fresh NodeNext project, where the
 * README's and the guide's examples must type-check and run as they do in the repository.
 */
async function consume(manager: "npm" | "pnpm"): Promise<void> {
  const { install, examples } = await readReadme();
  expect(examples.has("readme-embedding") && examples.has("readme-errors") && examples.has("guide-first-turn")).toBe(true);
  // Exactly the install line: every package an example imports is on it.
  for (const [marker, source] of examples) {
    for (const name of importsOf(source)) expect(install, `example:${marker} imports ${name}`).toContain(name);
  }
  for (const name of install) expect(tarballs.has(name), `${name} is a workspace package`).toBe(true);

  const consumer = join(work, `consumer-${manager}`);
  await mkdir(consumer);
  // The install line's packages are the project's only dependencies; the other @keel/* packages
  // they depend on come from their tarballs, where a registry would serve them.
  const dependencies = Object.fromEntries(install.map((name) => [name, `file:${tarballs.get(name)!}`]));
  const overrides = Object.fromEntries([...tarballs].filter(([name]) => !install.includes(name)).map(([name, file]) => [name, `file:${file}`]));
  if (manager === "npm") {
    await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies, overrides }, null, 2));
    await runOk("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], consumer);
  } else {
    // pnpm reads overrides from the project's own pnpm-workspace.yaml (JSON is valid YAML). Unlike
    // npm it resolves a dependency's own @keel/* ranges apart from the project's file: entries,
    // so every package is overridden, the install line's too.
    const everyTarball = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]));
    await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies }, null, 2));
    await writeFile(join(consumer, "pnpm-workspace.yaml"), `overrides: ${JSON.stringify(everyTarball)}\n`);
    await runOk("npx", [...pnpm, "install", "--reporter=silent"], consumer);
  }
  await writeFile(
    join(consumer, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2023"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        skipLibCheck: false,
        outDir: "out",
        typeRoots: [join(repoRoot, "node_modules", "@types")],
        types: ["node"],
      },
      include: ["*.ts"],
    }),
  );
  for (const [marker, source] of examples) await writeFile(join(consumer, `${marker}.ts`), source);
  const check = await run(process.execPath, [tsc, "-p", "tsconfig.json"], consumer);
  expect(`${check.stdout}${check.stderr}`).toBe("");
  expect(check.code).toBe(0);

  // The in-repository tests check each example's output line by line; here each must run
  // cleanly from the installed packages and end as it does there.
  const ends: Record<string, RegExp> = {
    "readme-embedding": /step 3 done\n3 turns in the work session\n$/,
    "readme-errors": /^no_session: [\s\S]*\nwork session open: m1\n/,
    "guide-first-turn": /^fresh Decision: answered turn 1\nresumed Decision: answered turn 2\n$/,
    "guide-capsules": /\ninspected: src\/cli\.ts\n$/,
    "guide-budgets": /refused before running: budget_exceeded\nbackend calls: 2\n$/,
  };
  for (const marker of examples.keys()) {
    const output = await run(process.execPath, [`out/${marker}.js`], consumer);
    expect(output.stderr, marker).toBe("");
    expect(output.code, marker).toBe(0);
    const end = ends[marker];
    if (end) expect(output.stdout, marker).toMatch(end);
  }
}
