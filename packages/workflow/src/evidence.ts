import { createHash } from "node:crypto";
import { lstat, readFile, realpath } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import { KeelError, validate } from "@keel/core";
import { errAsync, okAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { ProjectPathSchema } from "./definition-schemas.js";

/** Bounds of evidence intake and of responses (the numbers). */
export const EVIDENCE_LIMITS = Object.freeze({
  /** Characters of one free-text field. */
  fieldChars: 24_000,
  /** Characters of all evidence text together (excerpts included). */
  totalChars: 48_000,
  /** Selected files. */
  files: 8,
  /** Lines of one excerpt. */
  linesPerFile: 500,
  /** Bytes of one request (its JSON). */
  requestBytes: 200_000,
});

/** A file excerpt asked for: a path under the source root and an inclusive line range (1-based). */
export const FileSelectionSchema = z
  .strictObject({
    path: ProjectPathSchema,
    firstLine: z.number().int().min(1),
    lastLine: z.number().int().min(1),
  })
  .refine((file) => file.lastLine >= file.firstLine, { message: "lastLine must not be before firstLine", path: ["lastLine"] })
  .refine((file) => file.lastLine - file.firstLine + 1 <= EVIDENCE_LIMITS.linesPerFile, {
    message: `an excerpt is at most ${EVIDENCE_LIMITS.linesPerFile} lines`,
    path: ["lastLine"],
  });

/** A selected file. */
export type FileSelection = z.output<typeof FileSelectionSchema>;

const field = z.string().max(EVIDENCE_LIMITS.fieldChars, `at most ${EVIDENCE_LIMITS.fieldChars} characters`);

/** Validation of the checks a supervisor reports: a log is evidence, not proof that tests ran. */
export const ValidationStatusSchema = z.literal(["not_run", "passed", "failed"]);

/** A validation status. */
export type ValidationStatus = z.output<typeof ValidationStatusSchema>;

/**
 * Evidence given with a task, a step or a checkpoint: free text (each field at most 24,000
 * characters, all at most 48,000), the validation status, a revision and up to 8 file excerpts.
 * Every field is optional: later evidence replaces the fields it gives and keeps the others.
 */
export const EvidenceSchema = z
  .strictObject({
    context: field.optional(),
    diff: field.optional(),
    testOutput: field.optional(),
    validationStatus: ValidationStatusSchema.optional(),
    revision: z.string().max(128).optional(),
    files: z.array(FileSelectionSchema).max(EVIDENCE_LIMITS.files, `at most ${EVIDENCE_LIMITS.files} files`).optional(),
  })
  .refine((evidence) => (evidence.context?.length ?? 0) + (evidence.diff?.length ?? 0) + (evidence.testOutput?.length ?? 0) <= EVIDENCE_LIMITS.totalChars, {
    message: `all evidence text together is at most ${EVIDENCE_LIMITS.totalChars} characters`,
  });

/** Evidence as given. */
export type EvidenceInput = z.input<typeof EvidenceSchema>;
/** Validated evidence. */
export type Evidence = z.output<typeof EvidenceSchema>;

/** A source root: a non-empty path without NUL. */
const SourceRootSchema = z
  .string()
  .min(1)
  .max(4096)
  .refine((path) => !path.includes("\0"), "a path must not contain NUL");

const FileExcerptSchema = z.strictObject({ path: z.string(), firstLine: z.number().int(), lastLine: z.number().int(), text: z.string(), hash: z.string() });

/** An {@link EvidenceSnapshot}: what intake made (the snapshot it merges onto; a run's evidence). */
export const EvidenceSnapshotSchema = z.strictObject({
  context: z.string(),
  diff: z.string(),
  testOutput: z.string(),
  validationStatus: ValidationStatusSchema,
  revision: z.string(),
  files: z.array(FileExcerptSchema),
});

const IntakeInputSchema = z.strictObject({ evidence: EvidenceSchema, sourceRoot: SourceRootSchema.optional(), previous: EvidenceSnapshotSchema });
const FingerprintInputSchema = z.strictObject({ sourceRoot: SourceRootSchema, paths: z.array(ProjectPathSchema).max(64) });

/** A file excerpt read at intake, with the hash of the whole file beside it. */
export interface FileExcerpt {
  path: string;
  firstLine: number;
  lastLine: number;
  text: string;
  /** `sha256:<hex>` of the whole file's bytes: its source fingerprint. */
  hash: string;
}

/** Evidence after intake: the text fields and the excerpts read from the source root. */
export interface EvidenceSnapshot {
  context: string;
  diff: string;
  testOutput: string;
  validationStatus: ValidationStatus;
  revision: string;
  files: FileExcerpt[];
}

/** An empty snapshot. */
export function emptyEvidence(): EvidenceSnapshot {
  return { context: "", diff: "", testOutput: "", validationStatus: "not_run", revision: "", files: [] };
}

/**
 * Merges validated evidence onto `base` (the fields given replace the base's; `files`, when
 * given, replaces every excerpt) and reads the selected files from `sourceRoot`: each path confined to the
 * root (no `..`, no symlink leading out, regular files only), its lines cut to the range, the
 * whole file hashed. The excerpts count towards the 48,000-character total.
 *
 * Errors: `invalid_input` (evidence that fails {@link EvidenceSchema}, a root that is not a
 * non-empty path, outside the root, not a regular file, a line range past the end),
 * `not_found`, `too_large` (the total), `unsupported` (files selected with no source root).
 */
export function intakeEvidence(evidence: Evidence, sourceRoot: string | undefined, previous: EvidenceSnapshot = emptyEvidence()): ResultAsync<EvidenceSnapshot, KeelError> {
  const checked = validate(IntakeInputSchema, { evidence, sourceRoot, previous }, "evidence");
  if (checked.isErr()) return errAsync(checked.error);
  const base = {
    context: evidence.context ?? previous.context,
    diff: evidence.diff ?? previous.diff,
    testOutput: evidence.testOutput ?? previous.testOutput,
    validationStatus: evidence.validationStatus ?? previous.validationStatus,
    revision: evidence.revision ?? previous.revision,
  };
  if (base.context.length + base.diff.length + base.testOutput.length > EVIDENCE_LIMITS.totalChars) {
    return errAsync(new KeelError("too_large", `evidence text is over the limit of ${EVIDENCE_LIMITS.totalChars} characters in all`, { details: { what: "evidence", limit: EVIDENCE_LIMITS.totalChars } }));
  }
  if (evidence.files === undefined) return okAsync({ ...base, files: previous.files });
  if (evidence.files.length === 0) return okAsync({ ...base, files: [] });
  if (sourceRoot === undefined) return errAsync(new KeelError("unsupported", "evidence selects files but the engine has no sourceRoot: configure sourceRoot or pass the text as context", { details: { what: "evidence" } }));
  return ResultAsync.combine(evidence.files.map((file) => readExcerpt(sourceRoot, file))).andThen((files) => {
    const total = base.context.length + base.diff.length + base.testOutput.length + files.reduce((sum, file) => sum + file.text.length, 0);
    if (total > EVIDENCE_LIMITS.totalChars) {
      return errAsync(new KeelError("too_large", `evidence with its file excerpts is ${total} characters, over the limit of ${EVIDENCE_LIMITS.totalChars}: select fewer lines`, { details: { what: "evidence", total, limit: EVIDENCE_LIMITS.totalChars } }));
    }
    return okAsync({ ...base, files });
  });
}

/**
 * Hashes the current bytes of files under the root (for fingerprint checks), each checked as an
 * excerpt is (one containment check): a missing file hashes as `missing`, and a path that is now a
 * symlink, not a regular file or outside the root as `not_a_file` (never read through a link).
 * `invalid_input` for a root that is not a non-empty path or paths that are not project paths.
 */
export function fingerprintFiles(sourceRoot: string, paths: readonly string[]): ResultAsync<Record<string, string>, KeelError> {
  const checked = validate(FingerprintInputSchema, { sourceRoot, paths }, "fingerprint request");
  if (checked.isErr()) return errAsync(checked.error);
  return ResultAsync.fromThrowable(
    async () => {
      const result: Record<string, string> = {};
      const root = await realpath(sourceRoot);
      for (const path of paths) {
        const located = await locateInside(root, path);
        result[path] = located.kind === "file" ? hashBytes(await readFile(located.target)) : located.kind === "missing" ? "missing" : "not_a_file";
      }
      return result;
    },
    (error) => new KeelError("io_failed", `could not fingerprint source files: ${(error as Error).message}`, { cause: error }),
  )();
}

/** Where a project path leads under a (real) root: a regular file inside it, nothing, or something else (with why). */
type Located = { kind: "file"; target: string } | { kind: "missing" } | { kind: "refused"; reason: string };

/**
 * The one containment check of evidence paths: the path is looked at without following a final
 * link (a symlink is refused, saying whether it leads out), must be a regular file, and its real
 * path must stay under the root (a symlinked directory on the way is refused).
 */
async function locateInside(root: string, path: string): Promise<Located> {
  const target = join(root, path);
  const stat = await lstat(target).catch(() => undefined);
  if (!stat) return { kind: "missing" };
  if (stat.isSymbolicLink()) {
    const resolved = await realpath(target).catch(() => undefined);
    const inside = resolved === undefined ? ".." : relative(root, resolved);
    if (inside.startsWith("..") || isAbsolute(inside) || inside.split(sep).includes("..")) return { kind: "refused", reason: "is a symlink leading out of the source root" };
    return { kind: "refused", reason: "is a symlink: select the file it points to" };
  }
  if (!stat.isFile()) return { kind: "refused", reason: "is not a regular file" };
  const resolvedParent = relative(root, await realpath(target));
  if (resolvedParent.startsWith("..") || isAbsolute(resolvedParent)) return { kind: "refused", reason: "resolves outside the source root (a symlinked directory)" };
  return { kind: "file", target };
}

function hashBytes(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function readExcerpt(sourceRoot: string, file: FileSelection): ResultAsync<FileExcerpt, KeelError> {
  const bad = (message: string, code: "invalid_input" | "not_found" = "invalid_input") =>
    new KeelError(code, `evidence file "${file.path}" ${message}`, { details: { what: "evidence file", path: file.path } });
  return ResultAsync.fromThrowable(
    async (): Promise<FileExcerpt | KeelError> => {
      const located = await locateInside(await realpath(sourceRoot), file.path);
      if (located.kind === "missing") return bad("does not exist under the source root", "not_found");
      if (located.kind === "refused") return bad(located.reason);
      const bytes = await readFile(located.target);
      const lines = bytes.toString("utf8").split("\n");
      if (file.lastLine > lines.length) return bad(`has ${lines.length} lines; lastLine ${file.lastLine} is past its end`);
      return { path: file.path, firstLine: file.firstLine, lastLine: file.lastLine, text: lines.slice(file.firstLine - 1, file.lastLine).join("\n"), hash: hashBytes(bytes) };
    },
    (error) => new KeelError("io_failed", `could not read evidence file "${file.path}": ${(error as Error).message}`, { cause: error }),
  )().andThen((value) => (value instanceof KeelError ? errAsync(value) : okAsync(value)));
}
