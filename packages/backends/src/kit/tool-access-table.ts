import { asString, type Loose } from "./loose-json.js";
import { contentBytes, fileAccessOfCommand, type ToolFileAccess } from "./tool-calls.js";

/**
 * What a tool does to files: `read`, `write` (its bytes from its content) or `edit` the file its
 * arguments name; `search` there (else the table's pattern, else `.`); or run a `shell` command,
 * whose accesses are read from its `command` ({@link fileAccessOfCommand}).
 */
export type ToolAccessKind = "read" | "write" | "edit" | "search" | "shell";

/** How one CLI's tools touch files, for {@link toolAccessesFrom}. */
export interface ToolAccessTable {
  /** Each tool's kind by its name, or chosen from its arguments; a tool not named touches no file. */
  tools: Readonly<Record<string, ToolAccessKind | ((args: Loose | undefined) => ToolAccessKind)>>;
  /** The argument fields naming the file, tried in order: the first string wins. */
  pathFields: readonly string[];
  /** The argument fields holding a written file's text, tried in order: the first present wins. Default `content`. */
  contentFields?: readonly string[];
  /** The argument field a search without a path stands for (its pattern); without one, `.`. */
  searchPatternField?: string;
}

/**
 * The file accesses of one tool call, read through the CLI's `table`; a tool the table does not
 * name touches no file.
 *
 * @example
 * ```ts
 * const table = { tools: { read: "read", bash: "shell" }, pathFields: ["path"] } as const;
 * toolAccessesFrom(table, "read", { path: "a.ts" }); // [{ op: "read", path: "a.ts" }]
 * ```
 */
export function toolAccessesFrom(table: ToolAccessTable, tool: string, args: Loose | undefined): ToolFileAccess[] {
  const entry = Object.hasOwn(table.tools, tool) ? table.tools[tool] : undefined;
  const kind = typeof entry === "function" ? entry(args) : entry;
  const path = table.pathFields.reduce<string | undefined>((found, field) => found ?? asString(args?.[field]), undefined);
  switch (kind) {
    case "read":
      return path ? [{ op: "read", path }] : [];
    case "write": {
      const bytes = contentBytes((table.contentFields ?? ["content"]).reduce<unknown>((found, field) => found ?? args?.[field], undefined));
      return path ? [{ op: "write", path, ...(bytes === undefined ? {} : { bytes }) }] : [];
    }
    case "edit":
      return path ? [{ op: "write", path }] : [];
    case "search": {
      const pattern = table.searchPatternField === undefined ? undefined : asString(args?.[table.searchPatternField]);
      return [{ op: "search", path: path ?? pattern ?? "." }];
    }
    case "shell":
      return fileAccessOfCommand(asString(args?.command) ?? "");
    default:
      return [];
  }
}
