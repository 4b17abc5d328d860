import { promises as fs } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { KeelError, toKeelError, validate } from "@keel/core";
import { errAsync, type Result, ResultAsync } from "neverthrow";
import { z } from "zod";

/**
 * The instruction file names looked for in each directory, in order (the first one present
 * wins, one file per directory), as pi's resource loader does.
 */
export const DEFAULT_INSTRUCTION_FILE_NAMES: readonly string[] = Object.freeze(["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"]);

/** Options of {@link discoverInstructions}. */
export interface DiscoverInstructionsOptions {
  /** The working directory of the agent. */
  cwd: string;
  /** The agent's own configuration directory (pi: `~/.pi/agent`), read first; none when absent. */
  agentDir?: string;
  /** File names looked for in each directory, first match wins (default {@link DEFAULT_INSTRUCTION_FILE_NAMES}). */
  fileNames?: readonly string[];
  /**
   * Also read the directories above the repository root (default false). The repository root is
   * the nearest ancestor of `cwd` holding `.git` (a directory, or the file of a linked worktree);
   * with none, only `cwd` itself is inside.
   */
  trustOutsideRepository?: boolean;
  /** Largest file read, in bytes (default 65,536); a larger one is skipped and reported. */
  maxFileBytes?: number;
  /** Most bytes of all files (default 262,144): past it the most general files are dropped first. */
  maxTotalBytes?: number;
}

/** Where an instruction file was found. */
export type InstructionScope = "agent" | "outside" | "repository";

/** One instruction file, read. */
export interface InstructionFile {
  /** The path found (agent dir or ancestor, plus the file name). */
  path: string;
  /** Its real path (what duplicates are recognised by). */
  realPath: string;
  /** `agent` (the agent directory), `repository` (from the repository root down to `cwd`), `outside` (above it, when trusted). */
  scope: InstructionScope;
  /** The text (UTF-8). */
  content: string;
  /** Its size in bytes. */
  bytes: number;
}

/** A file found but not used. */
export interface SkippedInstructionFile {
  path: string;
  /** `too_large` (past `maxFileBytes`), `over_budget` (past `maxTotalBytes`), `duplicate` (same real file), `untrusted` (above the repository root), `unreadable`. */
  reason: "too_large" | "over_budget" | "duplicate" | "untrusted" | "unreadable";
}

/** The outcome of {@link discoverInstructions}. */
export interface InstructionDiscovery {
  /** The files, general to specific: the agent directory's, then from the outermost directory down to `cwd`. */
  files: InstructionFile[];
  /** Files found and not used, with why. */
  skipped: SkippedInstructionFile[];
  /** The repository root found, or `null`. */
  repositoryRoot: string | null;
}

const Schema = z
  .object({
    cwd: z.string().min(1).max(4096),
    agentDir: z.string().min(1).max(4096).optional(),
    fileNames: z
      .array(z.string().min(1).max(255).refine((name) => !/[\\/]/.test(name) && name !== "." && name !== "..", { message: "must be a plain file name" }))
      .min(1)
      .max(16)
      .optional(),
    trustOutsideRepository: z.boolean().optional(),
    maxFileBytes: z.number().int().min(1).max(16 * 1024 * 1024).optional(),
    maxTotalBytes: z.number().int().min(1).max(64 * 1024 * 1024).optional(),
  })
  .strict();

async function exists(path: string): Promise<boolean> {
  return fs.lstat(path).then(
    () => true,
    () => false,
  );
}

async function findRepositoryRoot(cwd: string): Promise<string | null> {
  for (let current = cwd; ; current = dirname(current)) {
    if (await exists(join(current, ".git"))) return current;
    if (dirname(current) === current) return null;
  }
}

/** The first of `fileNames` present in `directory` (as a file, links followed), or `null`. */
async function findIn(directory: string, fileNames: readonly string[]): Promise<string | null> {
  for (const name of fileNames) {
    const path = join(directory, name);
    const stat = await fs.stat(path).catch(() => undefined);
    if (stat?.isFile()) return path;
  }
  return null;
}

/**
 * Finds the project instruction files an agent should read (AGENTS.md and the like), general to
 * specific: the agent directory's first, then one per directory from the outermost ancestor of
 * `cwd` down to `cwd` itself — the first of `fileNames` present in each. Directories above the
 * repository root are read only with `trustOutsideRepository`. The same real file is used once
 * (its most general occurrence). Each file is capped at `maxFileBytes`, all together at
 * `maxTotalBytes` (the most general dropped first). Never fails for what it finds: every file not
 * used is in `skipped`; `invalid_input` only for bad options.
 *
 * Compared with pi 0.73's `loadProjectContextFiles`: the same names, one file per directory,
 * the same order; pi reads every ancestor to the filesystem root and dedupes by path as
 * written, so from a linked worktree nested in its main checkout pi also loads the main
 * checkout's copy (twice the text when both are the same); Keel stops at the worktree's root
 * unless trusted, and dedupes by real path.
 */
export function discoverInstructions(options: DiscoverInstructionsOptions): ResultAsync<InstructionDiscovery, KeelError> {
  const checked = validate(Schema, options, "instruction discovery options");
  if (checked.isErr()) return errAsync(checked.error);
  const fileNames = options.fileNames ?? DEFAULT_INSTRUCTION_FILE_NAMES;
  const maxFileBytes = options.maxFileBytes ?? 65_536;
  const maxTotalBytes = options.maxTotalBytes ?? 262_144;
  const run = async (): Promise<InstructionDiscovery> => {
    const cwd = resolve(options.cwd);
    const repositoryRoot = await findRepositoryRoot(cwd);
    const candidates: { path: string; scope: InstructionScope }[] = [];
    if (options.agentDir) {
      const found = await findIn(resolve(options.agentDir), fileNames);
      if (found) candidates.push({ path: found, scope: "agent" });
    }
    const ancestors: { path: string; scope: InstructionScope }[] = [];
    let inside = true;
    for (let current = cwd; ; current = dirname(current)) {
      const found = await findIn(current, fileNames);
      if (found) ancestors.unshift({ path: found, scope: inside ? "repository" : "outside" });
      if (current === (repositoryRoot ?? cwd)) inside = false;
      if (dirname(current) === current) break;
    }
    candidates.push(...ancestors);
    const skipped: SkippedInstructionFile[] = [];
    const seen = new Set<string>();
    const files: InstructionFile[] = [];
    for (const candidate of candidates) {
      if (candidate.scope === "outside" && !options.trustOutsideRepository) {
        skipped.push({ path: candidate.path, reason: "untrusted" });
        continue;
      }
      const realPath = await fs.realpath(candidate.path).catch(() => null);
      if (realPath === null) {
        skipped.push({ path: candidate.path, reason: "unreadable" });
        continue;
      }
      if (seen.has(realPath)) {
        skipped.push({ path: candidate.path, reason: "duplicate" });
        continue;
      }
      seen.add(realPath);
      const stat = await fs.stat(realPath);
      if (stat.size > maxFileBytes) {
        skipped.push({ path: candidate.path, reason: "too_large" });
        continue;
      }
      const content = await fs.readFile(realPath, "utf8").catch(() => null);
      if (content === null) {
        skipped.push({ path: candidate.path, reason: "unreadable" });
        continue;
      }
      files.push({ path: candidate.path, realPath, scope: candidate.scope, content, bytes: Buffer.byteLength(content) });
    }
    // Over the budget: drop the most general (earliest) files first; the agent directory's last.
    let total = files.reduce((sum, file) => sum + file.bytes, 0);
    const order = [...files.filter((file) => file.scope !== "agent"), ...files.filter((file) => file.scope === "agent")];
    for (const file of order) {
      if (total <= maxTotalBytes) break;
      files.splice(files.indexOf(file), 1);
      skipped.push({ path: file.path, reason: "over_budget" });
      total -= file.bytes;
    }
    return { files, skipped, repositoryRoot };
  };
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", "discovering instruction files failed")))();
}

/**
 * Renders instruction files as one tagged system-context block, each file under its path, in
 * the order given (general to specific, so that the specific reads last and wins):
 *
 * ```
 * <project_instructions>
 * Project-specific instructions, general to specific; a later file overrides an earlier one.
 * <instructions path="/repo/AGENTS.md">
 * …
 * </instructions>
 * </project_instructions>
 * ```
 * An empty list renders as the empty string; `invalid_input` for files that are not `{ path, content }`.
 */
export function renderInstructions(files: readonly Pick<InstructionFile, "path" | "content">[]): Result<string, KeelError> {
  return validate(RenderSchema, files, "instruction files").map(() => renderValid(files));
}

const RenderSchema = z.array(z.looseObject({ path: z.string().min(1).max(4096), content: z.string() })).max(1_000);

function renderValid(files: readonly Pick<InstructionFile, "path" | "content">[]): string {
  if (files.length === 0) return "";
  const quote = (path: string) => path.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");
  const blocks = files.map((file) => `<instructions path="${quote(file.path)}">\n${file.content.trimEnd()}\n</instructions>`);
  return ["<project_instructions>", "Project-specific instructions, general to specific; a later file overrides an earlier one.", ...blocks, "</project_instructions>"].join("\n");
}
