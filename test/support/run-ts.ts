import { spawn } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** What a finished child process printed. */
export interface ChildOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript file of the repository in a real Node child process (tsx, sources through `@keel/source`). */
export function runTs(file: string, args: readonly string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<ChildOutput> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@keel/source", file, ...args], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: "1", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** Runs the `keel` command from source in a child process. */
export function runKeel(args: readonly string[], options?: { env?: Record<string, string>; timeoutMs?: number }): Promise<ChildOutput> {
  return runTs("packages/cli/src/bin.ts", args, options);
}

/**
 * Runs the `<!-- example:<marker> -->` TypeScript block of the README (or of another Markdown
 * file of the repository, `document`) as it is written, from a scratch file beside the document
 * (removed afterwards) so that its imports resolve as they would for a user of that package; the
 * example can never rot. `undefined` when the file has no such block.
 */
export async function runReadmeExample(marker: string, document = "README.md"): Promise<ChildOutput | undefined> {
  const readme = await readFile(join(repoRoot, document), "utf8");
  // The block ends at a fence at the start of a line: a ``` inside the example (a template
  // literal, a comment) does not cut it short.
  const block = new RegExp(`<!-- example:${marker}[^>]*-->\\s*\`\`\`ts\\n([\\s\\S]*?\\n)\`\`\``).exec(readme)?.[1];
  if (block === undefined) return undefined;
  const file = join(repoRoot, dirname(document), `.readme-${marker}-${process.pid}.ts`);
  await writeFile(file, block);
  try {
    return await runTs(file, []);
  } finally {
    await rm(file, { force: true });
  }
}

/** The first fenced block after `lead` (a regular expression's source) in a Markdown file of the repository: what an example says it prints. */
export async function readmePrinted(document: string, lead: string): Promise<string | undefined> {
  const text = await readFile(join(repoRoot, document), "utf8");
  return new RegExp(`${lead}\\s*\`\`\`\\w*\\n([\\s\\S]*?\\n)\`\`\``).exec(text)?.[1];
}
