import type { JsonObject, Usage } from "@keel/core";

/** One role turn asked of a backend (named for its layer, apart from `@keel/sessions`' `RoleSessionTurnRequest`). */
export interface BackendTurnRequest {
  /** The prompt. On a resumed thread it is only the new part; the provider remembers the rest. */
  prompt: string;
  /** Absolute working directory the agent runs in. Resume a thread from the same `cwd` it was created in. */
  cwd: string;
  /** Model to use; the adapter's default (or the CLI's) when absent. */
  model?: string;
  /** Provider thread to resume; absent starts a fresh thread. */
  threadId?: string;
  /**
   * What the backend returned as {@link BackendTurnResult.resumeState} with the previous turn of
   * `threadId`, passed back unchanged. Only meaningful with `threadId`; a backend that needs it
   * and does not get it still runs the turn, with the buckets it cannot compute `null`.
   */
  resumeState?: JsonObject;
  /** Absolute paths of skills — each a skill directory or its `SKILL.md` — for `native` delivery. */
  skillPaths?: readonly string[];
  /** Wall-clock limit for the whole turn; past it the process group is killed and the turn is `timeout`. */
  timeoutMs: number;
  /** Extra environment variables for this turn (added to the adapter's environment). */
  env?: Readonly<Record<string, string>>;
}

/**
 * What a tool call of the agent did to a file, as far as the CLI's stream shows it:
 * `read` (a file opened), `write` (a file created, replaced or edited) or `search` (a grep,
 * a glob or a find over a path).
 */
export type BackendFileOperation = "read" | "write" | "search";

/**
 * One file access the agent really made in a turn, read from the CLI's tool calls (never from
 * what the model says about itself). The runtime emits `agent.io.read` / `agent.io.write` /
 * `agent.io.search` from these.
 */
export interface BackendFileAccess {
  /** What was done. */
  op: BackendFileOperation;
  /**
   * The path as the tool received it (absolute, or relative to the turn's `cwd`); for a search,
   * the directory or file searched, or the glob pattern when no path was given.
   */
  path: string;
  /** Bytes read or written, when the stream shows them (a read's output, a write's content). */
  bytes?: number;
  /** The CLI's tool name, e.g. `Read`, `read_file`, `exec_command`. */
  tool: string;
}

/** What a successful turn produced. */
export interface BackendTurnResult {
  /**
   * The turn's answer as the CLI reports it: its final result text where it has one (Claude
   * Code's `result`), otherwise the agent's messages of the turn in order (Gemini's text around
   * its tool calls, Codex's agent messages), never only the part after the last tool call.
   */
  text: string;
  /** The provider thread the turn ran in (to resume next time), or `null` on a fresh-only backend. */
  threadId: string | null;
  /**
   * Normalized usage of this turn only — never a thread's running total. Buckets the backend
   * did not report are `null`, never 0.
   */
  usage: Usage;
  /** Wall-clock duration measured by the adapter. */
  durationMs: number;
  /** Exit code of the CLI process, or `null` for a backend that runs no process. */
  exitCode: number | null;
  /**
   * The file reads, writes and searches the agent's tool calls made, in the order the stream
   * showed them. Empty when the turn used no file tool or the CLI does not show its tools.
   */
  fileAccess: BackendFileAccess[];
  /**
   * How many tool calls the agent made in this turn (file tools, shell commands and any other
   * tool): what work-session hygiene counts. `null` when the backend cannot see its agent's tool
   * calls (an API that reports none, a CLI whose stream is not known to show them): unknown,
   * never 0. 0 only when the stream shows tool calls and the turn made none.
   */
  toolCalls: number | null;
  /**
   * Adapter-owned plain JSON the host keeps with the thread and passes back as
   * {@link BackendTurnRequest.resumeState} when it resumes it (e.g. Codex's running usage total,
   * from which the next turn's own figure is computed). Absent when the backend needs none.
   */
  resumeState?: JsonObject;
}
