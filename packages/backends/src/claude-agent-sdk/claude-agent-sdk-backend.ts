import { performance } from "node:perf_hooks";
import {
  backendError,
  safeTurnListener,
  validateBackendTurnRequest,
  withBackendContext,
  type Backend,
  type BackendCapabilities,
  type BackendTurnListener,
  type BackendTurnRequest,
  type BackendTurnResult,
} from "@keel/backend";
import { KeelError, validate, validateOrThrow } from "@keel/core";
import { err, errAsync, ResultAsync, type Result } from "neverthrow";
import { z } from "zod";
import { createBoundedCapture } from "../internal/bounded-capture.js";
import { asRecord, createClaudeStyleParser, createFindingsObserver, stageSkillLinks, withPlainEnv, type StagedSkills, type StreamParser } from "../kit/index.js";
import { loadClaudeAgentSdkQuery } from "./claude-agent-sdk-loader.js";
import { CLAUDE_AGENT_SDK_ID, claudeAgentSdkTurnCost, decideClaudeAgentSdkOutcome } from "./claude-agent-sdk-outcome.js";
import { createClaudeAgentSdkTextProgress } from "./claude-agent-sdk-progress.js";
import type {
  ClaudeAgentSdkHookCallback,
  ClaudeAgentSdkPermissionMode,
  ClaudeAgentSdkQuery,
  ClaudeAgentSdkQueryHandle,
  ClaudeAgentSdkQueryOptions,
  ClaudeAgentSdkSessionStore,
  ClaudeAgentSdkSettingSource,
  ClaudeAgentSdkSystemPrompt,
} from "./claude-agent-sdk-types.js";

/** Options of {@link createClaudeAgentSdkBackend}. */
export interface ClaudeAgentSdkBackendOptions {
  /**
   * The SDK's `query` (from `@anthropic-ai/claude-agent-sdk`, or a stand-in in tests). When
   * absent, the package is imported on the first turn; not installed, every turn is `unavailable`.
   */
  query?: ClaudeAgentSdkQuery;
  /** Model when the request names none (otherwise Claude Code's default). */
  model?: string;
  /**
   * Permission mode (default `bypassPermissions`, with the SDK's `allowDangerouslySkipPermissions`:
   * a headless turn cannot answer prompts; pin `cwd` and sandbox the host instead). As root, the
   * adapter then sets `IS_SANDBOX=1` unless the environment sets it, as Claude Code requires.
   */
  permissionMode?: ClaudeAgentSdkPermissionMode;
  /** Tools allowed without asking (the SDK's `allowedTools`). */
  allowedTools?: readonly string[];
  /** Tools removed from the model's context (the SDK's `disallowedTools`). */
  disallowedTools?: readonly string[];
  /** System prompt: a string, or the `claude_code` preset with `append` (the SDK's `systemPrompt`). */
  systemPrompt?: ClaudeAgentSdkSystemPrompt;
  /**
   * Filesystem settings Claude Code loads (the SDK's `settingSources`; absent: all of them, as the
   * CLI does). Without `project`, Claude Code reads no `CLAUDE.md` and no skills of the staged
   * directory: `capabilities.instructions` and `capabilities.skills` are then `prompt`.
   */
  settingSources?: readonly ClaudeAgentSdkSettingSource[];
  /** Most model round trips per turn (the SDK's `maxTurns`). */
  maxTurns?: number;
  /**
   * Resume a thread as a fork (the SDK's `forkSession`): the turn continues the old history under a
   * new session id, which is the `threadId` it returns; the old session stays as it was.
   */
  forkSession?: boolean;
  /** A Claude Code executable instead of the SDK's bundled one (`pathToClaudeCodeExecutable`). */
  pathToClaudeCodeExecutable?: string;
  /** Environment added to every turn, over `process.env` unless `inheritEnv` is false. */
  env?: Readonly<Record<string, string>>;
  /**
   * Whether the child inherits `process.env` (default true). The SDK's `env` replaces the whole
   * environment, so the adapter always passes the merged one: `PATH` and `HOME` stay.
   */
  inheritEnv?: boolean;
  /** After an abort or a timeout, how long to wait for the query to end before giving up on it (default 5000 ms). */
  killGraceMs?: number;
  /** stderr of Claude Code kept for error messages (default 64 KiB). */
  maxStderrBytes?: number;
  /**
   * Where Claude Code mirrors each session, and resumes it from when this host has no local copy
   * (the SDK's `sessionStore`, **alpha** in the SDK; proven with 0.3.336):
   * `createClaudeSessionStore({ store })` keeps sessions in any Keel store, so a thread moves
   * between hosts with the store.
   */
  sessionStore?: ClaudeAgentSdkSessionStore;
}

const name = z
  .string()
  .min(1)
  .max(256)
  .refine((value) => !value.includes("\0"), { message: "must not contain NUL" });

/** Which settings Claude Code loads (`settingSources`); absent: all. */
const SettingSourcesSchema = z.array(z.enum(["user", "project", "local"])).optional();

const OptionsSchema = z.strictObject({
  query: z.custom<ClaudeAgentSdkQuery>((value) => typeof value === "function", { message: "must be the SDK's query function" }).optional(),
  model: name.refine((value) => !value.startsWith("-"), { message: "must not start with '-'" }).optional(),
  permissionMode: z.enum(["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto"]).optional(),
  allowedTools: z.array(name).optional(),
  disallowedTools: z.array(name).optional(),
  systemPrompt: z
    .union([
      z.string().refine((value) => !value.includes("\0"), { message: "must not contain NUL" }),
      z.strictObject({ type: z.literal("preset"), preset: z.literal("claude_code"), append: z.string().optional() }),
    ])
    .optional(),
  settingSources: SettingSourcesSchema,
  maxTurns: z.number().int().positive().max(10_000).optional(),
  forkSession: z.boolean().optional(),
  pathToClaudeCodeExecutable: name.max(4096).optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: "environment variable names are letters, digits and '_'" }), z.string()).optional(),
  inheritEnv: z.boolean().optional(),
  killGraceMs: z.number().int().nonnegative().max(60_000).optional(),
  maxStderrBytes: z.number().int().min(1024).optional(),
  sessionStore: z
    .custom<ClaudeAgentSdkSessionStore>(
      (value) => typeof value === "object" && value !== null && typeof (value as { append?: unknown }).append === "function" && typeof (value as { load?: unknown }).load === "function",
      { message: "must be a session store (append and load), e.g. createClaudeSessionStore({ store })" },
    )
    .optional(),
});

/**
 * The options as given, `env` copied into a plain object first (`process.env` is not one), inside
 * the parse: options whose reading throws (a getter, a proxy trap) are `invalid_input`, never a throw.
 */
const OptionsInputSchema = z.preprocess((input) => withPlainEnv(input), OptionsSchema);

/** A turn's optional `AbortSignal`. */
const SignalSchema = z.custom<AbortSignal>((value) => value instanceof AbortSignal, "signal must be an AbortSignal").optional();

/** What {@link claudeAgentSdkCapabilities} reads of the options (any other option is left alone). */
const CapabilitiesOptionsSchema = z.looseObject({ settingSources: SettingSourcesSchema });

/** Whether this process runs as root (uid 0); `false` where there are no uids. */
function runsAsRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

function processEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return env;
}

// A message the SDK yields goes to the kit's Claude-style parser as the stream-json line it
// was: the SDK relays Claude Code's own stream, and one parser reads both. A value that is not
// a JSON object stays one (`undefined` becomes a non-JSON line), so the parser counts it as garbage.
function asLine(message: unknown): string {
  try {
    return JSON.stringify(message) ?? String(message);
  } catch {
    return String(message);
  }
}

/**
 * The `PostToolUse` hook: each call the SDK reports in-process goes to the parser as the
 * `tool_use` and `tool_result` messages the stream carries for it, so the file accesses come from
 * the same reading of `Read`, `Edit`, `Bash` … as the stream's. The parser counts a call id once:
 * a call both the stream and the hook show is one call, and its read's bytes are filled once.
 * `afterPush` runs after each (progress events).
 */
function postToolUseHook(parser: StreamParser, afterPush: () => void): ClaudeAgentSdkHookCallback {
  return async (input, toolUseId) => {
    try {
      const id = input.tool_use_id ?? toolUseId;
      const name = input.tool_name;
      if (input.hook_event_name === "PostToolUse" && typeof id === "string" && typeof name === "string") {
        const session = typeof input.session_id === "string" ? { session_id: input.session_id } : {};
        parser.push(asLine({ type: "assistant", message: { role: "assistant", content: [{ type: "tool_use", id, name, input: input.tool_input ?? {} }] }, ...session }));
        parser.push(asLine({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: id }] }, tool_use_result: input.tool_response, ...session }));
        afterPush();
      }
    } catch {
      // Reading a call must never stop the agent.
    }
    return { continue: true };
  };
}

/**
 * The capabilities of a backend made with `options`. Claude Code reads `CLAUDE.md`, and the skills
 * of the directories it is given, only with the `project` setting source (seen with 0.3.336): with
 * it (or with all sources, the default) skills and instructions are `native`, without it both are
 * `prompt` — the host puts them into the prompt.
 *
 * @throws KeelError `invalid_input` when `options` is not an object or its `settingSources` is
 * not an array of `"user"`, `"project"` and `"local"`.
 */
export function claudeAgentSdkCapabilities(options: Pick<ClaudeAgentSdkBackendOptions, "settingSources"> = {}): BackendCapabilities {
  validateOrThrow(CapabilitiesOptionsSchema, options, "claude-agent-sdk capabilities options");
  const loadsProject = options.settingSources === undefined || options.settingSources.includes("project");
  const delivery = loadsProject ? "native" : "prompt";
  return Object.freeze({ resume: true, skills: delivery, usage: "full", instructions: delivery });
}

/**
 * A Backend over the Claude Agent SDK's `query()` (`@anthropic-ai/claude-agent-sdk`, a peer the
 * host installs): each turn is one `query()` with the prompt, in the request's `cwd`, resumed with
 * `resume: <threadId>` (and `forkSession` when the backend forks). The thread id is the
 * `session_id` of the SDK's `system/init` message; usage is the turn's `result.usage`, never the
 * running `modelUsage`/`total_cost_usd` of a resumed session; file accesses come from the tool
 * calls (`Read`, `Edit`, `Write`, `Grep`, `Glob`, `Bash` …, read as for Claude Code), both from the
 * messages' `tool_use` blocks and from an in-process `PostToolUse` hook the adapter registers (one
 * call counted once, by its tool use id).
 *
 * Progress (`runTurn`'s `onEvent`): each tool call and file access as soon as the stream or the
 * hook shows it, and the main thread's text as token-level deltas — with a listener the query
 * asks for the SDK's partial messages (`includePartialMessages`), whose `text_delta`s become the
 * `text` events, and an assistant message whose text streamed is not told again (one nothing
 * streamed is told whole; the result's text when the turn showed none). Without a listener no
 * partial messages are asked for; with one the result is the same: the partial messages are
 * progress only. Nothing is reported after the turn settles.
 *
 * Skills are `native` when Claude Code loads project settings (the default, or `settingSources`
 * with `project`): linked into a temporary `<dir>/.claude/skills/` passed as an additional
 * directory; otherwise `prompt`. Errors: a gone session is `resume_failed`; a provider error is `backend_failed`,
 * retryable for 429, 5xx and 529; the SDK's throw after an error result never replaces that
 * result; `timeout` and `aborted` abort the SDK's controller and close the query, which ends its
 * child process. Throws `invalid_input` (a `KeelError`) at once for bad options.
 *
 * @example
 * ```ts
 * import { query } from "@anthropic-ai/claude-agent-sdk";
 * const claude = createClaudeAgentSdkBackend({ query, settingSources: ["project"] });
 * const turn = await claude.runTurn({ prompt: "Summarize README.md", cwd: "/work/repo", timeoutMs: 600_000 });
 * ```
 */
export function createClaudeAgentSdkBackend(options: ClaudeAgentSdkBackendOptions = {}): Backend {
  const settings = validateOrThrow(OptionsInputSchema, options, "claude-agent-sdk backend options") as ClaudeAgentSdkBackendOptions;
  const capabilities = claudeAgentSdkCapabilities(settings);
  let loading: Promise<ClaudeAgentSdkQuery> | undefined;
  const loadQuery = (): Promise<ClaudeAgentSdkQuery> => {
    if (settings.query) return Promise.resolve(settings.query);
    // A failed load is not kept: the host may install the SDK and try again.
    loading ??= loadClaudeAgentSdkQuery().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };

  const runTurn = (input: BackendTurnRequest, signal?: AbortSignal, onEvent?: BackendTurnListener): ResultAsync<BackendTurnResult, KeelError> => {
    // The signal too is read once, inside a check: a value that is not an AbortSignal is invalid_input, never a throw.
    const valid = validateBackendTurnRequest(input).andThen((checked) => validate(SignalSchema, signal, "turn signal").map(() => checked));
    if (valid.isErr()) return errAsync(withBackendContext(valid.error, CLAUDE_AGENT_SDK_ID, null));
    const request = valid.value;
    if (signal?.aborted) return errAsync(backendError("aborted", CLAUDE_AGENT_SDK_ID, `${CLAUDE_AGENT_SDK_ID} turn was aborted before it started`));
    const run = ResultAsync.fromThrowable(
      () => runSdkTurn(request, settings, capabilities, loadQuery, signal, onEvent),
      (cause) =>
        KeelError.is(cause)
          ? withBackendContext(cause, CLAUDE_AGENT_SDK_ID, request.threadId ?? null)
          : backendError("backend_failed", CLAUDE_AGENT_SDK_ID, `${CLAUDE_AGENT_SDK_ID} failed: ${String(cause)}`, { threadId: request.threadId ?? null, cause }),
    );
    return run().andThen((result) => result);
  };

  return Object.freeze({ id: CLAUDE_AGENT_SDK_ID, capabilities, runTurn });
}

async function runSdkTurn(
  request: BackendTurnRequest,
  settings: ClaudeAgentSdkBackendOptions,
  capabilities: BackendCapabilities,
  loadQuery: () => Promise<ClaudeAgentSdkQuery>,
  signal: AbortSignal | undefined,
  onEvent: BackendTurnListener | undefined,
): Promise<Result<BackendTurnResult, KeelError>> {
  const started = performance.now();
  const query = await loadQuery();
  // `prompt` delivery: the host put the skills into the prompt; the paths are not for the SDK.
  const skillPaths = capabilities.skills === "native" ? (request.skillPaths ?? []) : [];
  let staged: StagedSkills | undefined;
  if (skillPaths.length > 0) {
    const stagedResult = await stageSkillLinks(CLAUDE_AGENT_SDK_ID, skillPaths, ".claude/skills");
    if (stagedResult.isErr()) return err(withBackendContext(stagedResult.error, CLAUDE_AGENT_SDK_ID, request.threadId ?? null));
    staged = stagedResult.value;
  }
  try {
    return await queryTurn(query, request, settings, signal, onEvent, staged?.dir, started);
  } finally {
    await staged?.cleanup().catch(() => undefined);
  }
}

function queryOptions(
  request: BackendTurnRequest,
  settings: ClaudeAgentSdkBackendOptions,
  controller: AbortController,
  onStderr: (data: string) => void,
  skillDir: string | undefined,
  onPostToolUse: ClaudeAgentSdkHookCallback,
  streamText: boolean,
): ClaudeAgentSdkQueryOptions {
  const permissionMode = settings.permissionMode ?? "bypassPermissions";
  const env: Record<string, string> = { ...(settings.inheritEnv === false ? {} : processEnvironment()), ...settings.env, ...request.env };
  // As root, Claude Code refuses bypassPermissions unless it is told it runs in a sandbox.
  if (permissionMode === "bypassPermissions" && runsAsRoot() && env.IS_SANDBOX === undefined) env.IS_SANDBOX = "1";
  const model = request.model ?? settings.model;
  const resume = request.threadId;
  return {
    cwd: request.cwd,
    env,
    abortController: controller,
    stderr: onStderr,
    permissionMode,
    ...(permissionMode === "bypassPermissions" ? { allowDangerouslySkipPermissions: true } : {}),
    ...(model === undefined ? {} : { model }),
    ...(resume === undefined ? {} : { resume, ...(settings.forkSession ? { forkSession: true } : {}) }),
    ...(settings.allowedTools ? { allowedTools: [...settings.allowedTools] } : {}),
    ...(settings.disallowedTools ? { disallowedTools: [...settings.disallowedTools] } : {}),
    ...(settings.systemPrompt === undefined ? {} : { systemPrompt: settings.systemPrompt }),
    ...(settings.settingSources ? { settingSources: [...settings.settingSources] } : {}),
    ...(settings.maxTurns === undefined ? {} : { maxTurns: settings.maxTurns }),
    ...(settings.pathToClaudeCodeExecutable === undefined ? {} : { pathToClaudeCodeExecutable: settings.pathToClaudeCodeExecutable }),
    ...(skillDir === undefined ? {} : { additionalDirectories: [skillDir] }),
    hooks: { PostToolUse: [{ hooks: [onPostToolUse] }] },
    ...(settings.sessionStore === undefined ? {} : { sessionStore: settings.sessionStore }),
    // Partial messages only for a listener: without one they would be read and dropped.
    ...(streamText ? { includePartialMessages: true } : {}),
  };
}

async function queryTurn(
  query: ClaudeAgentSdkQuery,
  request: BackendTurnRequest,
  settings: ClaudeAgentSdkBackendOptions,
  signal: AbortSignal | undefined,
  onEvent: BackendTurnListener | undefined,
  skillDir: string | undefined,
  started: number,
): Promise<Result<BackendTurnResult, KeelError>> {
  const resumeThreadId = request.threadId ?? null;
  const resumeState = resumeThreadId === null ? null : (request.resumeState ?? null);
  const parser = createClaudeStyleParser(CLAUDE_AGENT_SDK_ID);
  // Progress: tool calls and file accesses from the parser's findings (stream and hook alike),
  // text as the SDK's partial messages stream it (see `createClaudeAgentSdkTextProgress`).
  const emit = safeTurnListener(onEvent);
  let settled = false;
  const observeFindings = onEvent ? createFindingsObserver(() => parser.findings(), emit, { text: false }) : undefined;
  const text = createClaudeAgentSdkTextProgress(emit, () => parser.findings().text);
  const observe = (message: unknown) => {
    if (!onEvent || settled) return;
    observeFindings?.();
    text.observe(message);
  };
  const stderr = createBoundedCapture(settings.maxStderrBytes ?? 64 * 1024);
  const controller = new AbortController();
  let handle: ClaudeAgentSdkQueryHandle | undefined;
  let stop: "timeout" | "aborted" | null = null;
  let stopped: () => void = () => undefined;
  const stopping = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  const halt = (reason: "timeout" | "aborted") => {
    if (stop !== null) return;
    stop = reason;
    controller.abort();
    try {
      handle?.close?.();
    } catch {
      // closing a query that already ended
    }
    stopped();
  };
  const timer = setTimeout(() => halt("timeout"), request.timeoutMs);
  const onAbort = () => halt("aborted");
  signal?.addEventListener("abort", onAbort, { once: true });

  let result: Record<string, unknown> | undefined;
  let thrown: unknown;
  let totalCostUsd: number | undefined;
  const consume = (async () => {
    try {
      const hook = postToolUseHook(parser, () => {
        if (!settled) observeFindings?.();
      });
      handle = query({ prompt: request.prompt, options: queryOptions(request, settings, controller, (data) => stderr.push(Buffer.from(data)), skillDir, hook, onEvent !== undefined) });
      for await (const message of handle) {
        const record = asRecord(message);
        if (record?.type === "result") {
          result = record;
          const total = record.total_cost_usd;
          if (typeof total === "number" && Number.isFinite(total) && total >= 0) totalCostUsd = total;
          // The parser reads the cost from `total_cost_usd`: give it this turn's own.
          const { total_cost_usd: _running, ...rest } = record;
          const cost = claudeAgentSdkTurnCost(record, resumeThreadId !== null, resumeState);
          parser.push(asLine(cost === null ? rest : { ...rest, total_cost_usd: cost }));
        } else if (record?.type !== "stream_event") {
          // Partial messages are progress only: the parser (hence the result) never sees them,
          // so a turn streamed to a listener ends as one without.
          parser.push(asLine(message));
        }
        observe(message);
      }
    } catch (error) {
      thrown = error;
    }
  })();
  try {
    await Promise.race([consume, stopping]);
    if (stop !== null) {
      // Stopped: the SDK ends its child on abort (about 2 s at 0.3.336); wait for it, not forever.
      const grace = settings.killGraceMs ?? 5000;
      let graceTimer: NodeJS.Timeout | undefined;
      await Promise.race([consume, new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, grace)))]);
      clearTimeout(graceTimer);
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    // No event after the result settles (a query left running after a stop may still yield).
    settled = true;
  }
  const decided = decideClaudeAgentSdkOutcome({
    findings: parser.findings(),
    result,
    thrown,
    stop,
    resumeThreadId,
    stderr: stderr.text(),
    timeoutMs: request.timeoutMs,
  });
  const durationMs = Math.round(performance.now() - started);
  return decided.map(
    (parsed): BackendTurnResult => ({
      text: parsed.text,
      threadId: parsed.threadId,
      usage: parsed.usage,
      durationMs,
      exitCode: null,
      fileAccess: parsed.fileAccess,
      toolCalls: parsed.toolCalls,
      ...(totalCostUsd === undefined ? {} : { resumeState: { totalCostUsd } }),
    }),
  );
}
