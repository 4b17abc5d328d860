import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { z } from "zod";

/** A tool as the AI SDK takes it (what its `tool()` helper returns: description, input schema, execute). */
export interface DemoAiSdkTool<Input> {
  description: string;
  inputSchema: z.ZodType<Input>;
  execute(input: Input): Promise<string>;
}

/**
 * How the demo's tools touch files, for `toolFileAccess` of `createAiSdkBackend`: their calls
 * become the turn's `fileAccess`, so the report's reads and repeated reads are the agent's own.
 */
export const DEMO_AI_SDK_FILE_ACCESS = {
  read: { op: "read", pathArgument: "path" },
  write: { op: "write", pathArgument: "path", contentArgument: "content" },
  grep: { op: "search", pathArgument: "path" },
} as const;

/** The largest file `read` returns whole (the demo repository's files are a few hundred bytes). */
const MAX_READ_BYTES = 256 * 1024;

/**
 * The file tools the `ai-sdk` demo gives its agent over the demo repository `workspace`: `read`
 * a file, `write` one, `grep` a pattern. A path is absolute or relative to `workspace` and must
 * lie inside it; a tool that cannot do what it was asked answers with the reason (the model reads
 * it), never throws.
 */
export function demoAiSdkTools(workspace: string): { read: DemoAiSdkTool<{ path: string }>; write: DemoAiSdkTool<{ path: string; content: string }>; grep: DemoAiSdkTool<{ pattern: string; path?: string | undefined }> } {
  const inside = (path: string): string | undefined => {
    const full = resolve(workspace, path);
    const from = relative(workspace, full);
    return from.startsWith("..") || isAbsolute(from) ? undefined : full;
  };
  return {
    read: {
      description: "Read a file of the repository (path absolute or relative to the repository root).",
      inputSchema: z.object({ path: z.string().min(1) }),
      execute: async ({ path }) => {
        const full = inside(path);
        if (full === undefined) return `error: ${path} is outside the repository`;
        try {
          if ((await stat(full)).size > MAX_READ_BYTES) return `error: ${path} is larger than ${MAX_READ_BYTES} bytes`;
          return await readFile(full, "utf8");
        } catch (error) {
          return `error: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
        }
      },
    },
    write: {
      description: "Create or replace a file of the repository with the given content.",
      inputSchema: z.object({ path: z.string().min(1), content: z.string() }),
      execute: async ({ path, content }) => {
        const full = inside(path);
        if (full === undefined) return `error: ${path} is outside the repository`;
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, content);
        return `wrote ${Buffer.byteLength(content)} bytes to ${relative(workspace, full)}`;
      },
    },
    grep: {
      description: "Search the repository's files for a regular expression; answers file:line: text for each match.",
      inputSchema: z.object({ pattern: z.string().min(1), path: z.string().optional() }),
      execute: async ({ pattern, path = "." }) => {
        const full = inside(path);
        if (full === undefined) return `error: ${path} is outside the repository`;
        let expression: RegExp;
        try {
          expression = new RegExp(pattern);
        } catch {
          return `error: ${pattern} is not a regular expression`;
        }
        const matches: string[] = [];
        for (const file of await filesUnder(full)) {
          const lines = (await readFile(file, "utf8")).split("\n");
          lines.forEach((line, index) => {
            if (expression.test(line)) matches.push(`${relative(workspace, file)}:${index + 1}: ${line}`);
          });
        }
        return matches.length > 0 ? matches.slice(0, 200).join("\n") : "no matches";
      },
    },
  };
}

async function filesUnder(path: string): Promise<string[]> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return [];
  if (!info.isDirectory()) return [path];
  const entries = await readdir(path, { withFileTypes: true });
  const nested = await Promise.all(entries.filter((entry) => !entry.name.startsWith(".")).map((entry) => filesUnder(join(path, entry.name))));
  return nested.flat().sort();
}
