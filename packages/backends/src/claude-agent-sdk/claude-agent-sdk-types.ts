// The part of `@anthropic-ai/claude-agent-sdk` this adapter uses, described structurally. The SDK
// is a peer the host installs (it carries a ~400 MiB native binary): the emitted declarations must
// not name it, or a user without it could not type-check against `@keel/backends`. Names and
// shapes were checked against its `sdk.d.ts` at 0.3.336; the SDK's own `query` is assignable to
// `ClaudeAgentSdkQuery`.

/** Permission modes of the SDK's `Options.permissionMode` (its `PermissionMode`). */
export type ClaudeAgentSdkPermissionMode = "default" | "acceptEdits" | "bypassPermissions" | "plan" | "dontAsk" | "auto";

/** Filesystem settings the SDK may load (its `SettingSource`); `project` is what loads `CLAUDE.md`. */
export type ClaudeAgentSdkSettingSource = "user" | "project" | "local";

/**
 * The SDK's `Options.systemPrompt`, in the forms this adapter passes on: a string replaces the
 * Claude Code prompt (the SDK's own short agent prompt stays in front of it); the `claude_code`
 * preset keeps Claude Code's prompt and can `append` to it.
 */
export type ClaudeAgentSdkSystemPrompt = string | { type: "preset"; preset: "claude_code"; append?: string };

/**
 * What the SDK passes a `PostToolUse` hook (its `PostToolUseHookInput`, read loosely): the tool's
 * name, input and structured response, and the call's id, after the tool ran.
 */
export interface ClaudeAgentSdkPostToolUseInput {
  /** `PostToolUse`. */
  hook_event_name: string;
  /** The session the call belongs to. */
  session_id?: string;
  /** The tool's name (`Read`, `Edit`, `Bash` …). */
  tool_name?: string;
  /** The tool's input, as the model gave it. */
  tool_input?: unknown;
  /** The tool's structured result (the stream's `tool_use_result`). */
  tool_response?: unknown;
  /** The call's id (the stream's `tool_use` block `id`). */
  tool_use_id?: string;
  /** Set when a subagent made the call. */
  agent_id?: string;
}

/**
 * An in-process hook callback, as the SDK calls it (its `HookCallback`): the input, the tool use
 * id, and a signal; it answers `{ continue: true }` to let the agent go on.
 */
export type ClaudeAgentSdkHookCallback = (input: ClaudeAgentSdkPostToolUseInput, toolUseId: string | undefined, options: { signal: AbortSignal }) => Promise<{ continue?: boolean }>;

/** The hooks this adapter registers (the SDK's `Options.hooks`, `PostToolUse` only). */
export interface ClaudeAgentSdkHooks {
  /** Called after each tool call: the adapter reads the call's file accesses from it. */
  PostToolUse?: { matcher?: string; hooks: ClaudeAgentSdkHookCallback[] }[];
}

/**
 * The SDK's `SessionStore` (alpha at 0.3.336), as far as this adapter passes it on: Claude Code
 * mirrors each session's transcript to it, and a resume loads the session from it when the local
 * copy is missing. `createClaudeSessionStore` makes one over any Keel store; the SDK's own stores
 * fit too.
 */
export interface ClaudeAgentSdkSessionStore {
  /** Mirrors a batch of transcript entries of one session (or subagent) key. */
  append(key: { projectKey: string; sessionId: string; subpath?: string }, entries: { type: string; [key: string]: unknown }[]): Promise<void>;
  /** A session's entries, or `null` when it was never written. */
  load(key: { projectKey: string; sessionId: string; subpath?: string }): Promise<{ type: string; [key: string]: unknown }[] | null>;
  /** The project's sessions with their modification times. */
  listSessions?(projectKey: string): Promise<{ sessionId: string; mtime: number }[]>;
  /** Deletes a session. */
  delete?(key: { projectKey: string; sessionId: string; subpath?: string }): Promise<void>;
  /** The subagent transcripts of a session. */
  listSubkeys?(key: { projectKey: string; sessionId: string }): Promise<string[]>;
}

/** The options of `query()` this adapter sets (a subset of the SDK's `Options`, same names). */
export interface ClaudeAgentSdkQueryOptions {
  /** Working directory of the session. */
  cwd: string;
  /** Model id. */
  model?: string;
  /** Session to resume. */
  resume?: string;
  /** With `resume`: continue under a new session id, the old history kept. */
  forkSession?: boolean;
  /** Tools allowed without asking. */
  allowedTools?: string[];
  /** Tools removed from the model's context. */
  disallowedTools?: string[];
  /** Permission mode. */
  permissionMode?: ClaudeAgentSdkPermissionMode;
  /** Required by the SDK with `bypassPermissions`. */
  allowDangerouslySkipPermissions?: boolean;
  /** System prompt. */
  systemPrompt?: ClaudeAgentSdkSystemPrompt;
  /** Filesystem settings to load (`[]`: none). */
  settingSources?: ClaudeAgentSdkSettingSource[];
  /** Directories the agent may use besides `cwd` (skills staged under `.claude/skills` there are found). */
  additionalDirectories?: string[];
  /** Most agentic turns (model round trips) in the query. */
  maxTurns?: number;
  /** The Claude Code executable to run instead of the SDK's bundled one. */
  pathToClaudeCodeExecutable?: string;
  /** The child's WHOLE environment: the SDK does not merge it with `process.env`. */
  env: Record<string, string | undefined>;
  /** Aborting it stops the query and ends the child process. */
  abortController: AbortController;
  /** Receives the child's stderr. */
  stderr: (data: string) => void;
  /** In-process hooks (a `PostToolUse` hook reports each call's file accesses). */
  hooks?: ClaudeAgentSdkHooks;
  /** Where Claude Code mirrors its session transcripts, and resumes them from (alpha in the SDK). */
  sessionStore?: ClaudeAgentSdkSessionStore;
  /**
   * Yield the SDK's partial messages (`stream_event`, one Anthropic streaming event each) as the
   * model streams; the adapter asks for them only when a turn has a progress listener.
   */
  includePartialMessages?: boolean;
}

/**
 * What `query()` returns, as far as this adapter uses it: an async iterable of messages (read
 * loosely: the SDK's `SDKMessage` union has about 40 members and grows) that can be closed.
 */
export interface ClaudeAgentSdkQueryHandle extends AsyncIterable<unknown> {
  /** Ends the query and its child process at once (the SDK's `Query.close()`). */
  close?(): void;
}

/**
 * The SDK's `query` function, as this adapter calls it: pass `query` from
 * `@anthropic-ai/claude-agent-sdk` (it is assignable), or a scripted stand-in in tests.
 *
 * @example
 * ```ts
 * import { query } from "@anthropic-ai/claude-agent-sdk";
 * const backend = createClaudeAgentSdkBackend({ query });
 * ```
 */
export type ClaudeAgentSdkQuery = (params: { prompt: string; options: ClaudeAgentSdkQueryOptions }) => ClaudeAgentSdkQueryHandle;

/** What this adapter imports from `@anthropic-ai/claude-agent-sdk` when no `query` is injected. */
export interface ClaudeAgentSdkModule {
  /** The SDK's `query`. */
  query: ClaudeAgentSdkQuery;
}
