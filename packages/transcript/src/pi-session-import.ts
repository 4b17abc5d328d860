import { createHash } from "node:crypto";
import { KeelError, validate } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import type { TranscriptContext } from "./context-build.js";
import { readEntry } from "./entry-parse.js";
import { TimestampSchema, type TranscriptEntry } from "./entry-schema.js";
import { checkForwardParents, createMutableTree, type TranscriptTree } from "./transcript-tree.js";

/** The newest pi session format version this version reads and writes. */
export const PI_SESSION_VERSION = 3;

/** A pi session file's first line. */
export interface PiSessionHeader {
  /** The format version (1 when the header names none). */
  version: 1 | 2 | 3;
  /** pi's session id (a UUID). */
  id: string;
  timestamp: string;
  cwd: string;
  /** The parent session's file path, when pi forked this one. */
  parentSession?: string;
  /** The header as written, every field kept (v1 headers carry provider, modelId, thinkingLevel). */
  fields: Record<string, unknown>;
}

/**
 * Something wrong in a pi session file that the import recovered from, with its line (1-based):
 * - `torn_last_line`: the last line is cut off (a crash mid-write, never acknowledged); dropped;
 * - `not_json`: a line that is not JSON; dropped;
 * - `not_an_entry`: JSON that is not an object with a string `type`; dropped;
 * - `invalid_entry`: an entry of a known type that fails its schema; dropped;
 * - `second_header`: a second `session` line (pi can write one); dropped;
 * - `blank_line`: an empty line inside the file; nothing to keep;
 * - `duplicate_id`: the same entry written twice, identical; the copy is dropped;
 * - `missing_parent`: an entry whose parent is not in the file; it becomes a root (pi's walk
 *   stops there too), `parentId` says which parent was missing.
 *
 * With `strict: true` each of these (except `torn_last_line`) is a `corrupt` error instead.
 */
export interface PiImportDiagnostic {
  line: number;
  code: "torn_last_line" | "not_json" | "not_an_entry" | "invalid_entry" | "second_header" | "blank_line" | "duplicate_id" | "missing_parent";
  message: string;
  entryId?: string;
  parentId?: string;
}

/** Options of {@link importPiSession}. */
export interface ImportPiSessionOptions {
  /** Make every recoverable problem but a torn last line a `corrupt` error (default `false`: report it). */
  strict?: boolean;
}

/** A pi session read into a transcript tree (in memory; see `importPiSessionToStore` to keep it). */
export interface ImportedPiSession {
  /** The header of the file. */
  header: PiSessionHeader;
  /** The session id: the header's id. */
  sessionId: string;
  /** Every entry, in file order, migrated to the current format and mapped to Keel's types. */
  entries: readonly TranscriptEntry[];
  /** What the import recovered from, in line order. Empty for a clean file. */
  diagnostics: PiImportDiagnostic[];
  /** The leaf pi would resume at: the last entry of the file. */
  leafId(): string | null;
  /** The tree of the entries. */
  tree(): TranscriptTree;
  /** The model's context at `leafId` (default the leaf). */
  buildContext(leafId?: string | null): Result<TranscriptContext, KeelError>;
}

/** pi's entry type names that Keel spells differently. */
const PI_TO_KEEL_TYPE: Record<string, string> = { thinking_level_change: "thinking_change" };

function corrupt(line: number, message: string, details: Record<string, string | number> = {}): KeelError {
  return new KeelError("corrupt", `pi session line ${line}: ${message}`, { details: { line, ...details } });
}

/**
 * pi's `SessionHeader`: every field it writes, of its type (a field of another type is refused,
 * never read as "" or dropped); fields of other names are kept in `fields`.
 */
const PiHeaderSchema = z.looseObject({
  type: z.literal("session"),
  version: z.union([z.literal(1), z.literal(2), z.literal(3)]).optional(),
  id: z.string().min(1, "the session id must not be empty").max(256),
  timestamp: TimestampSchema,
  cwd: z.string(),
  parentSession: z.string().optional(),
});

/** The options of {@link importPiSession}, strict; `importPiSessionToStore` extends them. */
export const ImportPiSessionOptionsSchema = z.strictObject({ strict: z.boolean().optional() });

function readHeader(firstLine: string | undefined): Result<PiSessionHeader, KeelError> {
  if (firstLine === undefined || firstLine.trim() === "") return err(corrupt(1, "the file is empty: a pi session starts with a session header"));
  let parsed: unknown;
  try {
    parsed = JSON.parse(firstLine);
  } catch {
    return err(corrupt(1, "the header is not JSON: the file is not a pi session (nothing was changed)"));
  }
  const fields = parsed as Record<string, unknown>;
  if (typeof parsed !== "object" || parsed === null || fields["type"] !== "session" || typeof fields["id"] !== "string") {
    return err(corrupt(1, 'the first line is not a session header ({"type":"session","id":…})'));
  }
  const version = fields["version"] ?? 1;
  if (version !== 1 && version !== 2 && version !== 3) {
    return err(
      new KeelError("unsupported", `pi session format version ${JSON.stringify(version)} is not one this version reads (1 to ${PI_SESSION_VERSION}): upgrade @keel/transcript`, {
        details: { line: 1, version: String(version) },
      }),
    );
  }
  const checked = PiHeaderSchema.safeParse(fields);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const field = issue?.path.map(String).join(".") ?? "";
    return err(corrupt(1, `the session header's ${field || "shape"} is not what pi writes: ${issue?.message ?? "invalid"} (nothing was imported)`, { field }));
  }
  const header: PiSessionHeader = { version, id: checked.data.id, timestamp: checked.data.timestamp, cwd: checked.data.cwd, fields };
  if (checked.data.parentSession !== undefined) header.parentSession = checked.data.parentSession;
  return ok(header);
}

/** The ids a v1 → v2 migration assigns: 8 hex digits, as pi's, but derived from the session id and line so an import is repeatable. */
function migratedId(sessionId: string, line: number, used: Set<string>): string {
  for (let attempt = 0; ; attempt++) {
    const id = createHash("sha256").update(`${sessionId}:${line}:${attempt}`).digest("hex").slice(0, attempt < 100 ? 8 : 32);
    if (!used.has(id)) {
      used.add(id);
      return id;
    }
  }
}

/** Maps one pi entry (already migrated to v3) onto Keel's names: `thinking_level_change` → `thinking_change`, `fromHook` → `source`. */
function toKeelShape(raw: Record<string, unknown>): Record<string, unknown> {
  const type = raw["type"] as string;
  const renamed = PI_TO_KEEL_TYPE[type];
  if (renamed === undefined && !((type === "compaction" || type === "branch_summary") && "fromHook" in raw)) return raw;
  const mapped: Record<string, unknown> = { ...raw, type: renamed ?? type };
  if ((type === "compaction" || type === "branch_summary") && "fromHook" in mapped) {
    const fromHook = mapped["fromHook"];
    delete mapped["fromHook"];
    if (fromHook === true) mapped["source"] = "hook";
    else if (fromHook === false) mapped["source"] = "summarizer";
  }
  return mapped;
}

interface Line {
  number: number;
  value: Record<string, unknown>;
}

/** Splits the text into JSON lines after the header, reporting what cannot be read. */
function readLines(lines: readonly string[], endsWithNewline: boolean, diagnostics: PiImportDiagnostic[]): Line[] {
  const result: Line[] = [];
  const lastIndex = endsWithNewline ? lines.length - 2 : lines.length - 1;
  for (let index = 1; index <= lastIndex; index++) {
    const number = index + 1;
    let text = lines[index] as string;
    if (text.endsWith("\r")) text = text.slice(0, -1);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      if (text.trim() === "") {
        diagnostics.push({ line: number, code: "blank_line", message: `line ${number} is empty` });
        continue;
      }
      if (index === lastIndex && !endsWithNewline) {
        diagnostics.push({ line: number, code: "torn_last_line", message: `line ${number} is cut off (a write that never finished); it was dropped` });
      } else {
        diagnostics.push({ line: number, code: "not_json", message: `line ${number} is not JSON; it was dropped` });
      }
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== "string") {
      diagnostics.push({ line: number, code: "not_an_entry", message: `line ${number} is not an entry (an object with a type); it was dropped` });
      continue;
    }
    if ((value as { type: string }).type === "session") {
      diagnostics.push({ line: number, code: "second_header", message: `line ${number} is a second session header; it was dropped` });
      continue;
    }
    result.push({ number, value: value as Record<string, unknown> });
  }
  return result;
}

/** Brings v1 and v2 entries to v3 the way pi's migration does (ids chained in file order; `hookMessage` → `custom`). */
function migrate(header: PiSessionHeader, lines: Line[]): void {
  if (header.version < 2) {
    const used = new Set<string>();
    // pi resolves a v1 compaction's firstKeptEntryIndex against its list of parsed lines, header first.
    const byIndex: Line[] = [];
    let previous: string | null = null;
    for (const line of lines) {
      line.value["id"] = migratedId(header.id, line.number, used);
      line.value["parentId"] = previous;
      previous = line.value["id"] as string;
      byIndex.push(line);
    }
    for (const line of lines) {
      const index = line.value["firstKeptEntryIndex"];
      if (line.value["type"] !== "compaction" || typeof index !== "number") continue;
      const target = index >= 1 ? byIndex[index - 1] : undefined;
      if (target) line.value["firstKeptEntryId"] = target.value["id"];
      delete line.value["firstKeptEntryIndex"];
    }
  }
  if (header.version < 3) {
    for (const line of lines) {
      const message = line.value["message"] as Record<string, unknown> | undefined;
      if (line.value["type"] === "message" && message && message["role"] === "hookMessage") line.value["message"] = { ...message, role: "custom" };
    }
  }
}

/**
 * Reads a pi session file (JSONL, format versions 1 to 3) into a transcript tree: v1 entries get
 * ids chained in file order as pi's migration assigns them, v2 `hookMessage` becomes `custom`,
 * every entry type is mapped (`thinking_level_change` → `thinking_change`, `fromHook` → `source`)
 * and entries of unknown types are kept. The context it builds equals pi's own
 * `SessionManager` + `buildSessionContext` on the same file.
 *
 * Bad files never crash it and nothing is skipped silently: a header that is missing or not JSON
 * is `corrupt`, so is a header field of the wrong type (pi's `id`, `timestamp` as ISO 8601,
 * `cwd`, `parentSession`), an unknown version `unsupported`, a cycle in parent ids or one id for two
 * different entries `corrupt` (with `details.line`); every other problem is a
 * {@link PiImportDiagnostic} with its line (or, with `strict`, `corrupt`). The file is never
 * changed (pi rewrites it on open). Text that is not a string or options that are not
 * `{ strict?: boolean }` are `invalid_input`.
 *
 * @example
 * ```ts
 * const session = importPiSession(readFileSync(file, "utf8"))._unsafeUnwrap();
 * const { messages, model, thinkingLevel } = session.buildContext()._unsafeUnwrap();
 * ```
 */
export function importPiSession(text: string, options: ImportPiSessionOptions = {}): Result<ImportedPiSession, KeelError> {
  if (typeof text !== "string") return err(new KeelError("invalid_input", "importPiSession needs the text of a pi session file (a string)"));
  const checked = validate(ImportPiSessionOptionsSchema, options, "pi import options");
  if (checked.isErr()) return err(checked.error);
  const lines = text.split("\n");
  const header = readHeader(lines[0]);
  if (header.isErr()) return err(header.error);
  const diagnostics: PiImportDiagnostic[] = [];
  const read = readLines(lines, text.endsWith("\n"), diagnostics);
  migrate(header.value, read);
  const entries: TranscriptEntry[] = [];
  const lineOf: number[] = [];
  const byId = new Map<string, TranscriptEntry>();
  /** Indexes (into `entries`) of the entries whose parent was not read before them. */
  const forward: number[] = [];
  for (const line of read) {
    const parsed = readEntry(toKeelShape(line.value), `entry at line ${line.number}`);
    if (parsed.isErr()) {
      diagnostics.push({ line: line.number, code: "invalid_entry", message: `line ${line.number}: ${parsed.error.message}; it was dropped` });
      continue;
    }
    const entry = parsed.value;
    const earlier = byId.get(entry.id);
    if (earlier) {
      if (JSON.stringify(earlier) !== JSON.stringify(entry)) return err(corrupt(line.number, `entry id "${entry.id}" names two different entries`, { entryId: entry.id }));
      diagnostics.push({ line: line.number, code: "duplicate_id", message: `line ${line.number} repeats entry "${entry.id}"; the copy was dropped`, entryId: entry.id });
      continue;
    }
    if (entry.parentId !== null && !byId.has(entry.parentId)) forward.push(entries.length);
    byId.set(entry.id, entry);
    entries.push(entry);
    lineOf.push(line.number);
  }
  const forwardEntries: TranscriptEntry[] = [];
  for (const index of forward) {
    const entry = entries[index] as TranscriptEntry;
    if (entry.parentId !== null && !byId.has(entry.parentId)) {
      diagnostics.push({
        line: lineOf[index] as number,
        code: "missing_parent",
        message: `line ${lineOf[index]}: entry "${entry.id}" names a parent "${entry.parentId}" that is not in the file; it became a root`,
        entryId: entry.id,
        parentId: entry.parentId,
      });
      const root = { ...entry, parentId: null };
      entries[index] = root;
      byId.set(root.id, root);
    } else forwardEntries.push(entry);
  }
  diagnostics.sort((a, b) => a.line - b.line);
  if (options.strict) {
    const first = diagnostics.find((diagnostic) => diagnostic.code !== "torn_last_line");
    if (first) return err(corrupt(first.line, first.message, { problem: first.code }));
  }
  const forest = checkForwardParents(entries, byId, forwardEntries);
  if (forest.isErr()) {
    const index = forest.error.details["index"];
    const line = typeof index === "number" ? (lineOf[index] ?? 0) : 0;
    return err(new KeelError("corrupt", `pi session line ${line}: ${forest.error.message}`, { details: { ...forest.error.details, line } }));
  }
  const tree = createMutableTree(entries, byId);
  const leaf = entries.length > 0 ? (entries[entries.length - 1] as TranscriptEntry).id : null;
  return ok({
    header: header.value,
    sessionId: header.value.id,
    entries,
    diagnostics,
    leafId: () => leaf,
    tree: () => tree,
    buildContext: (leafId) => tree.buildContext(leafId === undefined ? leaf : leafId),
  });
}
