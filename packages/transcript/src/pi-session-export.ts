import { KeelError, validate } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { EntryIdSchema, TimestampSchema, type TranscriptEntry } from "./entry-schema.js";
import { PI_SESSION_VERSION, type PiSessionHeader } from "./pi-session-import.js";
import type { TranscriptTree } from "./transcript-tree.js";

/** What {@link exportPiSession} reads: a `Transcript`, or an `ImportedPiSession`. */
export interface PiExportSource {
  readonly sessionId: string;
  tree(): TranscriptTree;
  leafId(): string | null;
  /** An imported session's header (its cwd, id and parent are kept). */
  readonly header?: PiSessionHeader;
}

/** Options of {@link exportPiSession}. */
export interface ExportPiSessionOptions {
  /** The leaf pi resumes at (default the source's leaf). */
  leafId?: string;
  /** The working directory the header names (default the imported header's, else `process.cwd()`). */
  cwd?: string;
  /** The header's session id (default the imported header's id, else the transcript's session id). */
  sessionId?: string;
  /** The header's `parentSession` (pi: the parent file's path). */
  parentSession?: string;
  /** The header's timestamp (default the imported header's, else the first entry's, else now). */
  timestamp?: string;
}

const SourceSchema = z.custom<PiExportSource>(
  (value) => typeof value === "object" && value !== null && typeof (value as PiExportSource).tree === "function" && typeof (value as PiExportSource).leafId === "function",
  "exportPiSession needs a Transcript or an ImportedPiSession",
);

const ExportOptionsSchema = z.strictObject({
  leafId: EntryIdSchema.optional(),
  cwd: z.string().optional(),
  sessionId: z.string().min(1).max(256).optional(),
  parentSession: z.string().optional(),
  timestamp: TimestampSchema.optional(),
});

/** Keel's entry type names that pi spells differently. */
const KEEL_TO_PI_TYPE: Record<string, string> = { thinking_change: "thinking_level_change" };

/** One entry in pi's v3 shape: pi's type names, `source` back to `fromHook`; every other field kept. */
function toPiShape(entry: TranscriptEntry): Record<string, unknown> {
  const mapped: Record<string, unknown> = { ...entry, type: KEEL_TO_PI_TYPE[entry.type] ?? entry.type };
  if ((entry.type === "compaction" || entry.type === "branch_summary") && "source" in mapped) {
    mapped["fromHook"] = mapped["source"] === "hook";
    delete mapped["source"];
  }
  return mapped;
}

/**
 * Writes a transcript as a pi session file (format v3, one JSON object a line, ending with a
 * newline) that pi's `SessionManager` opens and builds the same context from. pi resumes at the
 * last line of a file, so the leaf is written last (its descendants, if any, before it: pi reads
 * parents by id, not by position). Every entry of the tree is written, unknown types included.
 * `unsupported` when the leaf is `null` (pi cannot resume before the first entry), `not_found`
 * for a leaf that is not in the tree, `invalid_input` for a source that is not a transcript or
 * options that are not a strict {@link ExportPiSessionOptions} (a `timestamp` must be ISO 8601).
 *
 * @example
 * ```ts
 * writeFileSync("session.jsonl", exportPiSession(transcript, { cwd: process.cwd() })._unsafeUnwrap());
 * ```
 */
export function exportPiSession(source: PiExportSource, options: ExportPiSessionOptions = {}): Result<string, KeelError> {
  const checked = validate(SourceSchema, source, "pi export source").andThen(() => validate(ExportOptionsSchema, options, "pi export options"));
  if (checked.isErr()) return err(checked.error);
  const tree = source.tree();
  const leafId = options.leafId ?? source.leafId();
  const entries = tree.entries();
  if (entries.length > 0 && leafId === null) {
    return err(new KeelError("unsupported", "the leaf is before the first entry, which a pi session file cannot say: pass a leafId", { details: { sessionId: source.sessionId } }));
  }
  if (leafId !== null && !tree.get(leafId)) {
    return err(new KeelError("not_found", `entry "${leafId}" is not in this transcript: pass the id of an existing entry`, { details: { entryId: leafId } }));
  }
  const first = entries[0];
  const header: Record<string, unknown> = {
    ...(source.header?.fields ?? {}),
    type: "session",
    version: PI_SESSION_VERSION,
    id: options.sessionId ?? source.header?.id ?? source.sessionId,
    timestamp: options.timestamp ?? source.header?.timestamp ?? first?.timestamp ?? new Date().toISOString(),
    cwd: options.cwd ?? source.header?.cwd ?? process.cwd(),
  };
  const parentSession = options.parentSession ?? source.header?.parentSession;
  if (parentSession !== undefined) header["parentSession"] = parentSession;
  const lines: string[] = [JSON.stringify(header)];
  let leaf: TranscriptEntry | undefined;
  for (const entry of entries) {
    if (entry.id === leafId) leaf = entry;
    else lines.push(JSON.stringify(toPiShape(entry)));
  }
  if (leaf) lines.push(JSON.stringify(toPiShape(leaf)));
  return ok(`${lines.join("\n")}\n`);
}
