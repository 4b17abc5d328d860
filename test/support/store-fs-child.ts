import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url));

/** A TypeScript worker running in a real child process, its stdout read line by line. */
export interface Worker {
  child: ChildProcess;
  /** Complete lines printed so far. */
  lines: string[];
  /** Everything printed on stderr. */
  stderr(): string;
  /** Resolves when a line matching `pattern` appears (rejects if the process exits first). */
  waitFor(pattern: RegExp): Promise<string>;
  /** Resolves with the `count`-th line matching `pattern` once it appears (rejects if the process exits first). */
  waitForCount(pattern: RegExp, count: number): Promise<string>;
  /** Resolves with the exit code and signal once the process is gone (and reaped). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `node --import tsx --conditions=@keel/source <file> ...args` from the repository root,
 * as a real process (the only honest way to test crashes and several processes); with `plain`,
 * `node <file> ...args` for a bundle made by {@link bundleWorker}.
 */
export function startWorker(file: string, args: readonly string[], options: { env?: Record<string, string>; plain?: boolean } = {}): Worker {
  // `plain`: `file` is JavaScript already (a bundle), started without tsx (a tenth of the start-up cost).
  const flags = options.plain ? [] : ["--import", "tsx", "--conditions=@keel/source"];
  const child = spawn(process.execPath, [...flags, file, ...args], {
    cwd: repositoryRoot,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let partial = "";
  let stderr = "";
  // `left`: how many more matching lines the waiter needs.
  const waiters: { pattern: RegExp; left: number; resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const waiter of waiters.splice(0)) {
        if (waiter.pattern.test(line) && --waiter.left === 0) waiter.resolve(line);
        else waiters.push(waiter);
      }
    }
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("close", (code, signal) => {
      for (const waiter of waiters.splice(0)) waiter.reject(new Error(`worker exited (${code ?? signal}) before printing ${waiter.pattern}: ${stderr}`));
      resolve({ code, signal });
    });
  });
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitFor: (pattern) => waitForCount(pattern, 1),
    waitForCount,
  };

  function waitForCount(pattern: RegExp, count: number): Promise<string> {
    const seen = lines.filter((line) => pattern.test(line));
    if (seen.length >= count) return Promise.resolve(seen[count - 1]!);
    if (child.exitCode !== null || child.signalCode !== null) return Promise.reject(new Error(`worker already exited: ${stderr}`));
    return new Promise((resolve, reject) => waiters.push({ pattern, left: count - seen.length, resolve, reject }));
  }
}

/**
 * Bundles a TypeScript worker and everything it imports (the sources, through `@keel/source`)
 * into one ES module at `outFile`, with the esbuild that tsx uses: a bundle starts in a fraction
 * of the time tsx takes to load the sources, which matters when a test starts a thousand workers.
 * Packages named in `native` (better-sqlite3: a native addon loaded next to its own files) stay
 * outside the bundle, imported from where the repository installs them, by absolute path, so the
 * bundle runs from any directory.
 */
export async function bundleWorker(file: string, outFile: string, options: { native?: readonly string[] } = {}): Promise<string> {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"));
  const esbuild = fromTsx("esbuild") as { build(options: Record<string, unknown>): Promise<unknown> };
  const native = options.native ?? [];
  const fromRoot = createRequire(path.join(repositoryRoot, "package.json"));
  const byPath = {
    name: "native-by-path",
    setup(build: { onResolve(options: { filter: RegExp }, callback: (args: { path: string }) => { path: string; external: boolean }): void }) {
      build.onResolve({ filter: new RegExp(`^(${native.join("|")})$`) }, (args) => ({ path: fromRoot.resolve(args.path), external: true }));
    },
  };
  await esbuild.build({
    entryPoints: [path.join(repositoryRoot, file)],
    outfile: outFile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@keel/source"],
    logLevel: "error",
    plugins: native.length > 0 ? [byPath] : [],
    // Packages that load CommonJS at run time need a require in an ES module bundle.
    banner: { js: 'import { createRequire as __keelRequire } from "node:module"; const require = __keelRequire(import.meta.url);' },
  });
  return outFile;
}
