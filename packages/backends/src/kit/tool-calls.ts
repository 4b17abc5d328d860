import type { BackendFileAccess, BackendFileOperation } from "@keel/backend";
import type { StreamFindings } from "./turn-outcome.js";

/** A file access a tool call made, before it is recorded (see {@link recordToolCall}). */
export interface ToolFileAccess {
  /** What the tool did. */
  op: BackendFileOperation;
  /** The path (or, for a search without one, the pattern). */
  path: string;
  /** Exact bytes read or written, when the call shows them. */
  bytes?: number;
}

/**
 * Counts one tool call in the findings and records the file accesses it made (none for a tool
 * that touches no file, e.g. a web fetch). Empty paths are dropped.
 */
export function recordToolCall(findings: StreamFindings, tool: string, accesses: readonly ToolFileAccess[] = []): void {
  findings.toolCalls += 1;
  (findings.toolNames ??= []).push(tool);
  for (const access of accesses) {
    if (access.path.trim() === "") continue;
    const entry: BackendFileAccess = { op: access.op, path: access.path, tool };
    if (access.bytes !== undefined && Number.isSafeInteger(access.bytes) && access.bytes >= 0) entry.bytes = access.bytes;
    findings.fileAccess.push(entry);
  }
}

/** UTF-8 bytes of a string a tool wrote, or `undefined` when it is not a string. */
export function contentBytes(content: unknown): number | undefined {
  return typeof content === "string" ? Buffer.byteLength(content) : undefined;
}

/** Splits a shell command into words: single and double quotes and backslashes, no expansion. */
function shellWords(command: string): string[][] {
  const commands: string[][] = [[]];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  const endWord = () => {
    if (inWord) commands[commands.length - 1]!.push(word);
    word = "";
    inWord = false;
  };
  for (let index = 0; index < command.length; index += 1) {
    const char = command[index]!;
    if (quote) {
      if (char === quote) quote = null;
      else if (char === "\\" && quote === '"' && index + 1 < command.length) word += command[++index];
      else word += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === "\\" && index + 1 < command.length) {
      word += command[++index];
      inWord = true;
    } else if (/\s/.test(char)) {
      endWord();
    } else if (char === "|" || char === ";" || char === "&") {
      endWord();
      if (commands[commands.length - 1]!.length > 0) commands.push([]);
    } else if (char === ">" || char === "<") {
      endWord();
      commands[commands.length - 1]!.push(char);
    } else {
      word += char;
      inWord = true;
    }
  }
  endWord();
  return commands.filter((words) => words.length > 0);
}

const READERS = new Set(["cat", "head", "tail", "less", "more", "nl", "wc", "bat", "sed", "awk"]);
const SEARCHERS = new Set(["grep", "rg", "egrep", "fgrep", "ag", "find", "fd", "ls", "tree"]);

/** Operands of a command: its words after the name that are not options (nor an option's value for sed/awk scripts). */
function operands(words: readonly string[]): string[] {
  const name = words[0]!;
  const rest = words.slice(1).filter((word) => !word.startsWith("-") && word !== "<" && !/^\d+$/.test(word));
  // sed, awk, grep and rg take a script or pattern first; the files follow.
  if (name === "sed" || name === "awk" || name === "grep" || name === "rg" || name === "egrep" || name === "fgrep" || name === "ag") {
    return rest.slice(1);
  }
  return rest;
}

/**
 * The file accesses a shell command makes, read from the command text (for CLIs whose agent
 * explores with a shell: Codex's `exec_command`, the `bash` tools): `cat`/`head`/`tail`/`sed`/…
 * of a file is a `read`, `grep`/`rg`/`find`/`ls` a `search` of its path (`.` when none is
 * named), `> file` or `tee file` a `write`. A `bash -lc '<script>'` wrapper is unwrapped.
 * Anything else (a build, a test run) is no file access. Best effort: a heuristic over the
 * command text, never run.
 *
 * @example
 * ```ts
 * fileAccessOfCommand("bash -lc 'sed -n 1,80p src/app.ts'"); // [{ op: "read", path: "src/app.ts" }]
 * ```
 */
export function fileAccessOfCommand(command: string | readonly string[]): ToolFileAccess[] {
  const text = typeof command === "string" ? command : command.join(" ");
  const accesses: ToolFileAccess[] = [];
  for (const words of shellWords(text)) {
    const name = words[0]!.split("/").pop()!;
    // Codex 0.171.0 runs every command as `/bin/bash -lc '<command>'`.
    if ((name === "bash" || name === "sh" || name === "zsh") && (words[1] === "-lc" || words[1] === "-c") && words[2]) {
      accesses.push(...fileAccessOfCommand(words[2]));
      continue;
    }
    const redirect = words.indexOf(">");
    if (redirect >= 0 && words[redirect + 1]) accesses.push({ op: "write", path: words[redirect + 1]! });
    const plain = redirect >= 0 ? words.slice(0, redirect) : words;
    if (name === "tee") for (const path of operands(plain)) accesses.push({ op: "write", path });
    else if (READERS.has(name)) for (const path of operands(plain)) accesses.push({ op: "read", path });
    else if (SEARCHERS.has(name)) {
      const paths = operands(plain);
      if (paths.length === 0) accesses.push({ op: "search", path: "." });
      else for (const path of name === "find" || name === "fd" ? paths.slice(0, 1) : paths) accesses.push({ op: "search", path });
    }
  }
  return accesses.filter((access) => !access.path.startsWith("/dev/"));
}
