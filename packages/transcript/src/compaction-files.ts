import path from "node:path";
import type { AssistantMessage, ToolResultMessage, TranscriptEntry } from "./entry-schema.js";

/** Files read and modified, sorted; a file both read and modified is listed as modified only. */
export interface FileOperations {
  readFiles: string[];
  modifiedFiles: string[];
}

/** Tool names whose path arguments are modified (case-insensitive); any other tool's paths count as read. */
export const MODIFYING_TOOLS: readonly string[] = ["write", "edit", "multiedit", "multi_edit", "apply_patch", "create", "delete", "move", "rename", "str_replace_based_edit_tool"];

const PATH_ARGUMENTS = ["path", "file_path", "filePath", "file", "filename", "target", "destination"];
const PATHS_ARGUMENTS = ["paths", "files"];

/**
 * Normalizes a path for the file lists: POSIX separators, `.` and `..` resolved, no trailing
 * slash, and (with `cwd`) absolute paths under `cwd` made relative to it, so `./a.ts`, `a.ts`
 * and `/work/a.ts` (cwd `/work`) are one file.
 */
export function normalizeFilePath(file: string, cwd?: string): string {
  let normalized = path.posix.normalize(file.replaceAll("\\", "/"));
  if (cwd) {
    const base = path.posix.normalize(cwd.replaceAll("\\", "/")).replace(/\/$/, "");
    if (normalized === base) normalized = ".";
    else if (normalized.startsWith(`${base}/`)) normalized = normalized.slice(base.length + 1);
  }
  if (normalized.length > 1 && normalized.endsWith("/")) normalized = normalized.slice(0, -1);
  return normalized;
}

/** Accumulates file operations across entries, compactions and branch summaries. */
export interface FileTracker {
  /** Adds the tool calls of an assistant message, a tool result's `details.touchedPaths`, or a summary's file lists. */
  add(entry: TranscriptEntry): void;
  /** Adds file lists (a previous compaction's or branch summary's `details`). */
  addLists(details: unknown): void;
  /** The lists so far. */
  result(): FileOperations;
}

function pathsOf(argumentsValue: Record<string, unknown>): string[] {
  const found: string[] = [];
  for (const name of PATH_ARGUMENTS) if (typeof argumentsValue[name] === "string" && argumentsValue[name] !== "") found.push(argumentsValue[name] as string);
  for (const name of PATHS_ARGUMENTS) {
    const list = argumentsValue[name];
    if (Array.isArray(list)) for (const item of list) if (typeof item === "string" && item !== "") found.push(item);
  }
  return found;
}

/**
 * Tracks files from the tool calls of every tool (read: any tool's path arguments; modified: a
 * {@link MODIFYING_TOOLS} tool's), from `details.touchedPaths` (`{ read?: string[], modified?: string[] }`)
 * of tool results (how a shell tool reports what it touched), and from earlier summaries'
 * `details` (`readFiles`, `modifiedFiles`). Paths are normalized with {@link normalizeFilePath}.
 */
export function createFileTracker(cwd?: string): FileTracker {
  const read = new Set<string>();
  const modified = new Set<string>();
  const addAll = (target: Set<string>, list: unknown): void => {
    if (Array.isArray(list)) for (const item of list) if (typeof item === "string" && item !== "") target.add(normalizeFilePath(item, cwd));
  };
  const tracker: FileTracker = {
    add: (entry) => {
      if (entry.type === "message") {
        const message = entry["message"] as AssistantMessage | ToolResultMessage;
        if (message.role === "assistant") {
          for (const block of message.content) {
            if (block.type !== "toolCall") continue;
            const name = String(block["name"] ?? "").toLowerCase();
            const target = MODIFYING_TOOLS.includes(name) ? modified : read;
            for (const file of pathsOf((block["arguments"] ?? {}) as Record<string, unknown>)) target.add(normalizeFilePath(file, cwd));
          }
        } else if (message.role === "toolResult") {
          const touched = (message["details"] as { touchedPaths?: { read?: unknown; modified?: unknown } } | undefined)?.touchedPaths;
          if (touched) {
            addAll(read, touched.read);
            addAll(modified, touched.modified);
          }
        }
      } else if (entry.type === "compaction" || entry.type === "branch_summary") {
        if (entry["source"] !== "hook") tracker.addLists(entry["details"]);
      }
    },
    addLists: (details) => {
      if (typeof details !== "object" || details === null) return;
      addAll(read, (details as { readFiles?: unknown }).readFiles);
      addAll(modified, (details as { modifiedFiles?: unknown }).modifiedFiles);
    },
    result: () => ({
      readFiles: [...read].filter((file) => !modified.has(file)).sort(),
      modifiedFiles: [...modified].sort(),
    }),
  };
  return tracker;
}

/** The file lists as appended to a summary (pi's `<read-files>` / `<modified-files>` sections), or "". */
export function formatFileOperations(files: FileOperations): string {
  const sections: string[] = [];
  if (files.readFiles.length > 0) sections.push(`<read-files>\n${files.readFiles.join("\n")}\n</read-files>`);
  if (files.modifiedFiles.length > 0) sections.push(`<modified-files>\n${files.modifiedFiles.join("\n")}\n</modified-files>`);
  return sections.length === 0 ? "" : `\n\n${sections.join("\n\n")}`;
}
