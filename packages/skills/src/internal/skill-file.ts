import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type { SkillDiscoveryMode } from "../skill-view.js";
import { checkFrontmatter, type FrontmatterIssue, type SkillFields } from "./frontmatter-check.js";
import { locateFrontmatter } from "./frontmatter-locate.js";
import { type FileSignature, signatureOf } from "./scan-cache.js";
import { parseSimpleYaml } from "./simple-yaml.js";

/** Size limits of a SKILL.md read. */
export interface SkillFileLimits {
  maxFileBytes: number;
  maxFrontmatterBytes: number;
}

/** The outcome of reading one SKILL.md candidate. */
export type SkillFileRead =
  /** No such regular file. */
  | { kind: "absent" }
  /** The file is a symbolic link (only when the platform can tell on open). */
  | { kind: "symlink" }
  /** Something other than a regular file has the name (a directory, a FIFO, a device). */
  | { kind: "not_a_file" }
  /** The file exists but could not be opened or read. */
  | { kind: "unreadable"; message: string }
  /** The file was read: `fields` when usable, and its issues. */
  | { kind: "read"; signature: FileSignature; fields: SkillFields | null; issues: FrontmatterIssue[] };

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
/** Never block on open: a FIFO named SKILL.md must not hang discovery. */
const NON_BLOCK = constants.O_NONBLOCK ?? 0;
const FIRST_READ_BYTES = 4096;
const scratch = Buffer.allocUnsafe(FIRST_READ_BYTES);

/** True when the platform refuses to open a symlink with `O_NOFOLLOW` (so one `open` tells). */
export const OPEN_DETECTS_SYMLINKS = NO_FOLLOW !== 0;

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? ((error as { code?: string }).code ?? undefined) : undefined;
}

/** Reads until the closing `---` is found, the file ends, or `cap` bytes were read. */
function readFrontmatterText(fd: number, size: number, cap: number): { text: string } | { issue: FrontmatterIssue } {
  let buffer: Buffer = scratch;
  let length = 0;
  let want = Math.min(size, cap, FIRST_READ_BYTES);
  for (;;) {
    while (length < want) {
      const read = readSync(fd, buffer, length, want - length, length);
      if (read === 0) break;
      length += read;
    }
    const complete = length >= size || length < want;
    const location = locateFrontmatter(buffer, length, complete);
    if (location.kind === "found") return { text: buffer.toString("utf8", location.yamlStart, location.yamlEnd) };
    if (location.kind === "missing") {
      return { issue: { severity: "error", code: "no_frontmatter", message: "the file does not start with a `---` frontmatter block" } };
    }
    if (complete) {
      return { issue: { severity: "error", code: "unterminated_frontmatter", message: "the frontmatter has no closing `---` line" } };
    }
    if (length >= cap) {
      return {
        issue: { severity: "error", code: "frontmatter_too_large", message: `no closing \`---\` within the first ${cap} bytes: shorten the frontmatter` },
      };
    }
    want = Math.min(size, cap, Math.max(want * 4, FIRST_READ_BYTES));
    const grown = Buffer.allocUnsafe(want);
    buffer.copy(grown, 0, 0, length);
    buffer = grown;
  }
}

/** Parses frontmatter YAML: the fast path when it applies, else the full `yaml` parser. */
export function parseFrontmatterYaml(text: string): { data: unknown } | { issue: FrontmatterIssue } {
  const simple = parseSimpleYaml(text);
  if (simple !== undefined) return { data: simple };
  try {
    return { data: parseYaml(text, { logLevel: "error" }) as unknown };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return { issue: { severity: "error", code: "invalid_yaml", message: `the frontmatter is not valid YAML: ${reason}` } };
  }
}

/**
 * Reads the frontmatter of the SKILL.md at `path` (never its body) and judges it. The final path
 * component is opened without following a symlink where the platform allows it. Never throws.
 */
export function readSkillFile(path: string, directoryName: string, mode: SkillDiscoveryMode, limits: SkillFileLimits): SkillFileRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NO_FOLLOW | NON_BLOCK);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "absent" };
    if (code === "ELOOP" && NO_FOLLOW !== 0) return { kind: "symlink" };
    return { kind: "unreadable", message: error instanceof Error ? error.message : String(error) };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { kind: "not_a_file" };
    const signature = signatureOf(stat);
    if (stat.size > limits.maxFileBytes) {
      const message = `the file has ${stat.size} bytes, more than the ${limits.maxFileBytes} allowed: move detail into references/`;
      return { kind: "read", signature, fields: null, issues: [{ severity: "error", code: "file_too_large", message }] };
    }
    const located = readFrontmatterText(fd, stat.size, limits.maxFrontmatterBytes);
    if ("issue" in located) return { kind: "read", signature, fields: null, issues: [located.issue] };
    const parsed = parseFrontmatterYaml(located.text);
    if ("issue" in parsed) return { kind: "read", signature, fields: null, issues: [parsed.issue] };
    const verdict = checkFrontmatter(parsed.data, directoryName, mode);
    return { kind: "read", signature, fields: verdict.fields, issues: verdict.issues };
  } catch (error) {
    return { kind: "unreadable", message: error instanceof Error ? error.message : String(error) };
  } finally {
    closeSync(fd);
  }
}
