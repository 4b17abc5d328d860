import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BackendTurnEvent } from "@keel/backend";
import { describeBackendConformance, type BackendConformanceScenario } from "@keel/testkit/backend";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createClaudeAgentSdkBackend,
  loadClaudeAgentSdkQuery,
  type ClaudeAgentSdkQuery,
  type ClaudeAgentSdkQueryOptions,
} from "./index.js";

type Recording =
  | "success"
  | "resumed"
  | "forked"
  | "resume-not-found"
  | "tool-calls"
  | "provider-500"
  | "provider-529"
  | "provider-429"
  | "provider-400"
  | "hang"
  | "partial"
  | "partial-tool";

/**
 * Messages the real SDK (0.3.336) yielded against the fake provider, one JSON object a line
 * (`partial*`: with `includePartialMessages`, so with its `stream_event`s).
 */
function recorded(name: Recording): Record<string, unknown>[] {
  const text = readFileSync(new URL(`./__fixtures__/claude-agent-sdk.${name}.jsonl`, import.meta.url), "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** What the SDK throws after an error result (its iterator always does). */
function thrownAfter(messages: readonly Record<string, unknown>[]): Error | undefined {
  const result = messages.find((message) => message.type === "result");
  if (result?.is_error !== true) return undefined;
  const errors = Array.isArray(result.errors) ? (result.errors as string[]) : [];
  return new Error(`Claude Code returned an error result: ${errors[0] ?? String(result.result)}`);
}

/** The messages with each stream event's `text_delta` split into deltas of `size` characters, as a real model streams. */
function inPieces(messages: readonly Record<string, unknown>[], size: number): Record<string, unknown>[] {
  return messages.flatMap((message) => {
    const event = message.event as { type?: string; delta?: { type?: string; text?: string } } | undefined;
    if (message.type !== "stream_event" || event?.type !== "content_block_delta" || event.delta?.type !== "text_delta") return [message];
    const text = event.delta.text ?? "";
    const pieces = Array.from({ length: Math.ceil(text.length / size) }, (_, index) => text.slice(index * size, (index + 1) * size));
    return pieces.map((piece) => ({ ...message, event: { ...event, delta: { ...event.delta, text: piece } } }));
  });
}

interface Play {
  messages: readonly unknown[];
  /** Thrown once the messages are out (default: as the SDK does after an error result). */
  throws?: Error | null;
  /** Never end until aborted (then throw as the SDK does). */
  hang?: boolean;
  stderr?: string;
}

/** A scripted stand-in for the SDK's `query`: yields the recorded messages, records the options. */
function fakeQuery(play: (options: ClaudeAgentSdkQueryOptions, prompt: string) => Play) {
  const calls: { prompt: string; options: ClaudeAgentSdkQueryOptions }[] = [];
  let closed = 0;
  const query: ClaudeAgentSdkQuery = ({ prompt, options }) => {
    calls.push({ prompt, options });
    const script = play(options, prompt);
    async function* messages() {
      if (script.stderr) options.stderr(script.stderr);
      for (const message of script.messages) yield message;
      if (script.hang) {
        await new Promise<void>((resolve) => {
          if (options.abortController.signal.aborted) resolve();
          options.abortController.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        throw new Error("Claude Code process aborted by user");
      }
      const thrown = script.throws === undefined ? thrownAfter(script.messages as Record<string, unknown>[]) : script.throws;
      if (thrown) throw thrown;
    }
    const generator = messages();
    return Object.assign(generator, { close: () => void closed++ });
  };
  return { query, calls, closed: () => closed };
}

const SCENARIOS: Record<BackendConformanceScenario, () => Play> = {
  success: () => ({ messages: recorded("success") }),
  unknown_events: () => {
    const [init, ...rest] = recorded("success");
    return { messages: [init, { type: "system", subtype: "api_retry", attempt: 1 }, { type: "stream_event", event: {} }, { type: "keel_unknown" }, ...rest] };
  },
  in_band_error: () => ({ messages: recorded("success").map((message) => (message.type === "result" ? { ...message, is_error: true, subtype: "error_during_execution", errors: ["it broke"] } : message)) }),
  transient_error: () => ({ messages: recorded("provider-529") }),
  garbage: () => ({ messages: ["not a message", 42], throws: null }),
  hang: () => ({ messages: recorded("hang"), hang: true }),
  tool_read: () => ({ messages: recorded("tool-calls") }),
};

describe("createClaudeAgentSdkBackend over a scripted query", () => {
  let cwd: string;
  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), "keel-agent-sdk-"));
  });
  afterEach(() => rm(cwd, { recursive: true, force: true }));

  const turn = { prompt: "Summarize the README.", timeoutMs: 10_000 };

  it("runs a fresh turn: text, the init session id, the result's usage and the turn's cost", async () => {
    const fake = fakeQuery(() => ({ messages: recorded("success") }));
    const result = (await createClaudeAgentSdkBackend({ query: fake.query }).runTurn({ ...turn, cwd }))._unsafeUnwrap();
    expect(result).toMatchObject({ text: "first answer", threadId: "dde77ff4-f6ba-4225-bbb8-16ab0eef91e1", exitCode: null, toolCalls: 0, fileAccess: [] });
    expect(result.usage).toEqual({ inputUncached: 900, cacheRead: 300, cacheWrite: 50, output: 12, reasoning: null, costUsd: 0.0031575 });
    expect(result.resumeState).toEqual({ totalCostUsd: 0.0031575 });
  });

  it("resumes with `resume`, and reports the turn's own usage, not the session's running modelUsage/cost", async () => {
    const fake = fakeQuery(() => ({ messages: recorded("resumed") }));
    const backend = createClaudeAgentSdkBackend({ query: fake.query });
    const threadId = "dde77ff4-f6ba-4225-bbb8-16ab0eef91e1";
    const result = (await backend.runTurn({ ...turn, cwd, threadId, resumeState: { totalCostUsd: 0.0031575 } }))._unsafeUnwrap();
    expect(fake.calls[0]!.options).toMatchObject({ resume: threadId });
    expect(fake.calls[0]!.options.forkSession).toBeUndefined();
    expect(result.threadId).toBe(threadId);
    // modelUsage says 1300/1500/50/19 and total_cost_usd 0.0048225 (the session's); the turn was 400/1200/0/7.
    expect(result.usage).toMatchObject({ inputUncached: 400, cacheRead: 1200, cacheWrite: 0, output: 7, reasoning: null });
    expect(result.usage.costUsd).toBeCloseTo(0.001665, 9);
    expect(result.resumeState).toEqual({ totalCostUsd: 0.0048225 });
  });

  it("prices a resumed turn from the previous total when the SDK gives no per-turn usage, and leaves it null when unknown", async () => {
    const withoutSince = () => recorded("resumed").map((message) => (message.type === "result" ? { ...message, model_usage_since_last_result: undefined } : message));
    const backend = createClaudeAgentSdkBackend({ query: fakeQuery(() => ({ messages: withoutSince() })).query });
    const threadId = "dde77ff4-f6ba-4225-bbb8-16ab0eef91e1";
    const known = (await backend.runTurn({ ...turn, cwd, threadId, resumeState: { totalCostUsd: 0.0031575 } }))._unsafeUnwrap();
    expect(known.usage.costUsd).toBeCloseTo(0.001665, 9);
    const unknown = (await backend.runTurn({ ...turn, cwd, threadId }))._unsafeUnwrap();
    expect(unknown.usage.costUsd).toBeNull();
    expect(unknown.usage.output).toBe(7);
  });

  it("forks on resume when asked: forkSession is passed and the new session id is the thread", async () => {
    const fake = fakeQuery(() => ({ messages: recorded("forked") }));
    const backend = createClaudeAgentSdkBackend({ query: fake.query, forkSession: true });
    const result = (await backend.runTurn({ ...turn, cwd, threadId: "dde77ff4-f6ba-4225-bbb8-16ab0eef91e1" }))._unsafeUnwrap();
    expect(fake.calls[0]!.options).toMatchObject({ resume: "dde77ff4-f6ba-4225-bbb8-16ab0eef91e1", forkSession: true });
    expect(result.threadId).toBe("b249a835-0478-4e7a-b698-a48a280c5bce");
    expect(result.usage.costUsd).toBeCloseTo(0.000075, 9);
    // A fresh turn never forks.
    await backend.runTurn({ ...turn, cwd });
    expect(fake.calls[1]!.options.forkSession).toBeUndefined();
    expect(fake.calls[1]!.options.resume).toBeUndefined();
  });

  it("never takes the 0 output_tokens of assistant messages", async () => {
    const messages = recorded("success").filter((message) => message.type !== "result");
    const result = await createClaudeAgentSdkBackend({ query: fakeQuery(() => ({ messages })).query }).runTurn({ ...turn, cwd });
    expect(result._unsafeUnwrapErr().code).toBe("corrupt");
  });

  it("passes cwd, model, tools, permission mode, system prompt and setting sources through, env merged over process.env", async () => {
    const fake = fakeQuery(() => ({ messages: recorded("success") }));
    const backend = createClaudeAgentSdkBackend({
      query: fake.query,
      model: "claude-sonnet-4-5",
      permissionMode: "acceptEdits",
      allowedTools: ["Read", "Grep"],
      disallowedTools: ["WebFetch"],
      systemPrompt: { type: "preset", preset: "claude_code", append: "Be brief." },
      settingSources: ["project"],
      maxTurns: 4,
      env: { KEEL_OPTION: "a", SHARED: "option" },
    });
    (await backend.runTurn({ ...turn, cwd, env: { KEEL_REQUEST: "b", SHARED: "request" } }))._unsafeUnwrap();
    const options = fake.calls[0]!.options;
    expect(fake.calls[0]!.prompt).toBe(turn.prompt);
    expect(options).toMatchObject({
      cwd,
      model: "claude-sonnet-4-5",
      permissionMode: "acceptEdits",
      allowedTools: ["Read", "Grep"],
      disallowedTools: ["WebFetch"],
      systemPrompt: { type: "preset", preset: "claude_code", append: "Be brief." },
      settingSources: ["project"],
      maxTurns: 4,
    });
    expect(options.allowDangerouslySkipPermissions).toBeUndefined();
    expect(options.env).toMatchObject({ PATH: process.env.PATH, KEEL_OPTION: "a", KEEL_REQUEST: "b", SHARED: "request" });
    expect(backend.capabilities).toEqual({ resume: true, skills: "native", usage: "full", instructions: "native" });
  });

  it("defaults to bypassPermissions with the SDK's consent flag; a request's model wins; inheritEnv false keeps only what is given", async () => {
    const fake = fakeQuery(() => ({ messages: recorded("success") }));
    const backend = createClaudeAgentSdkBackend({ query: fake.query, model: "a", inheritEnv: false, env: { PATH: "/bin" }, settingSources: [] });
    (await backend.runTurn({ ...turn, cwd, model: "b" }))._unsafeUnwrap();
    const options = fake.calls[0]!.options;
    expect(options).toMatchObject({ permissionMode: "bypassPermissions", allowDangerouslySkipPermissions: true, model: "b", settingSources: [] });
    const expectedEnv: Record<string, string> = { PATH: "/bin" };
    if (process.getuid?.() === 0) expectedEnv.IS_SANDBOX = "1";
    expect(options.env).toEqual(expectedEnv);
    // Without project settings Claude Code reads no CLAUDE.md and no staged skill: the host puts both into the prompt.
    expect(backend.capabilities).toMatchObject({ instructions: "prompt", skills: "prompt" });
  });

  it("passes a session store on to the SDK as its sessionStore, and none by default", async () => {
    const fake = fakeQuery(() => ({ messages: recorded("success") }));
    const sessionStore = { append: async () => undefined, load: async () => null };
    (await createClaudeAgentSdkBackend({ query: fake.query, sessionStore }).runTurn({ ...turn, cwd }))._unsafeUnwrap();
    (await createClaudeAgentSdkBackend({ query: fake.query }).runTurn({ ...turn, cwd }))._unsafeUnwrap();
    expect(fake.calls[0]!.options.sessionStore).toBe(sessionStore);
    expect(fake.calls[1]!.options).not.toHaveProperty("sessionStore");
  });

  it("reports the file accesses and tool calls of the recorded Read and Bash calls", async () => {
    const result = (await createClaudeAgentSdkBackend({ query: fakeQuery(() => ({ messages: recorded("tool-calls") })).query }).runTurn({ ...turn, cwd }))._unsafeUnwrap();
    expect(result.toolCalls).toBe(2);
    expect(result.fileAccess).toEqual([
      { op: "read", path: "/work/harbor/project/README.md", tool: "Read", bytes: 30 },
      { op: "read", path: "README.md", tool: "Bash" },
    ]);
    expect(result.text).toBe("done");
  });

  it("reports tool calls, file accesses and each assistant message's text to onEvent as the messages arrive (nothing streamed)", async () => {
    const seen: { event: BackendTurnEvent; sawResult: boolean }[] = [];
    let sawResult = false;
    const fake = fakeQuery(() => ({ messages: recorded("tool-calls") }));
    const watched: ClaudeAgentSdkQuery = (params) => {
      const handle = fake.query(params);
      return Object.assign(
        (async function* () {
          for await (const message of handle) {
            if ((message as { type?: unknown }).type === "result") sawResult = true;
            yield message;
          }
        })(),
        { close: () => handle.close?.() },
      );
    };
    const result = (await createClaudeAgentSdkBackend({ query: watched }).runTurn({ ...turn, cwd }, undefined, (event) => seen.push({ event, sawResult })))._unsafeUnwrap();
    expect(seen.map(({ event: { at: _at, ...event } }) => event)).toEqual([
      { type: "tool_call", tool: "Read" },
      { type: "file_access", access: { op: "read", path: "/work/harbor/project/README.md", tool: "Read" } },
      { type: "tool_call", tool: "Bash" },
      { type: "file_access", access: { op: "read", path: "README.md", tool: "Bash" } },
      { type: "text", text: "done" },
    ]);
    // Every event came before the result message was yielded: progress, not a replay.
    expect(seen.every((entry) => !entry.sawResult)).toBe(true);
    // Observing changes nothing: the result is the one a turn without a listener gives.
    const unobserved = (await createClaudeAgentSdkBackend({ query: fakeQuery(() => ({ messages: recorded("tool-calls") })).query }).runTurn({ ...turn, cwd }))._unsafeUnwrap();
    expect({ ...result, durationMs: 0 }).toEqual({ ...unobserved, durationMs: 0 });
  });

  it("reports the answer once when only the result carries it, and a throwing listener never breaks the turn", async () => {
    const messages = recorded("success").filter((message) => message.type !== "assistant");
    const seen: BackendTurnEvent[] = [];
    const backend = createClaudeAgentSdkBackend({ query: fakeQuery(() => ({ messages })).query });
    const expected = messages.find((message) => message.type === "result")!.result;
    (await backend.runTurn({ ...turn, cwd }, undefined, (event) => seen.push(event)))._unsafeUnwrap();
    expect(seen.map((event) => event.type === "text" && event.text)).toEqual([expected]);
    const thrown = await backend.runTurn({ ...turn, cwd }, undefined, () => {
      throw new Error("observer bug");
    });
    expect(thrown._unsafeUnwrap().text).toBe(expected);
  });

  it("with a listener asks for partial messages and reports their text deltas in order, each message's text once; the result is unchanged", async () => {
    // As the SDK: stream events only when asked for. The fake provider sends a text in one
    // delta; a real model sends many: each recorded text_delta is split in pieces of 4 characters.
    const play = (options: ClaudeAgentSdkQueryOptions): Play => ({
      messages: options.includePartialMessages ? inPieces(recorded("partial-tool"), 4) : recorded("partial-tool").filter((message) => message.type !== "stream_event"),
    });
    const observedFake = fakeQuery(play);
    const seen: BackendTurnEvent[] = [];
    const observed = (await createClaudeAgentSdkBackend({ query: observedFake.query }).runTurn({ ...turn, cwd }, undefined, (event) => seen.push(event)))._unsafeUnwrap();
    expect(observedFake.calls[0]!.options.includePartialMessages).toBe(true);
    const readme = "/work/harbor/project/README.md";
    expect(seen.map(({ at: _at, ...event }) => event)).toEqual([
      ...["Let ", "me r", "ead ", "it."].map((text) => ({ type: "text", text })),
      { type: "tool_call", tool: "Read" },
      { type: "file_access", access: { op: "read", path: readme, tool: "Read" } },
      ...["The ", "READ", "ME n", "ames", " lig", "htho", "use-", "42."].map((text) => ({ type: "text", text })),
    ]);
    // The turn's answer, usage and thread, as a turn without a listener (no partial messages asked for) gives them.
    const unobservedFake = fakeQuery(play);
    const unobserved = (await createClaudeAgentSdkBackend({ query: unobservedFake.query }).runTurn({ ...turn, cwd }))._unsafeUnwrap();
    expect(unobservedFake.calls[0]!.options).not.toHaveProperty("includePartialMessages");
    expect({ ...observed, durationMs: 0 }).toEqual({ ...unobserved, durationMs: 0 });
    expect(observed).toMatchObject({ text: "The README names lighthouse-42.", threadId: recorded("partial-tool")[0]!.session_id, toolCalls: 1, fileAccess: [{ op: "read", path: readme, tool: "Read", bytes: 30 }] });
    expect(observed.usage).toEqual({ inputUncached: 1000, cacheRead: 200, cacheWrite: 40, output: 60, reasoning: null, costUsd: expect.any(Number) });
    // The last message's deltas, concatenated, are the answer.
    const texts = seen.flatMap((event) => (event.type === "text" ? [event.text] : []));
    expect(texts.slice(4).join("")).toBe(observed.text);
  });

  it("streams the main thread's text deltas only: not a subagent's, not thinking or tool input; an unstreamed message is told whole", async () => {
    const [init, ...rest] = recorded("partial");
    const session = { session_id: init!.session_id };
    const event = (event: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: "stream_event", event, parent_tool_use_id: null, ...session, ...extra });
    const delta = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => event({ type: "content_block_delta", index: 0, delta }, extra);
    const assistant = (id: string | undefined, text: string, extra: Record<string, unknown> = {}) => ({
      type: "assistant",
      message: { ...(id === undefined ? {} : { id }), role: "assistant", content: [{ type: "text", text }] },
      parent_tool_use_id: null,
      ...session,
      ...extra,
    });
    const messages = [
      init,
      // A thinking block and a subagent's text: no text event.
      event({ type: "message_start", message: { id: "msg_a", content: [] } }),
      delta({ type: "thinking_delta", thinking: "hmm" }),
      delta({ type: "text_delta", text: "sub " }, { parent_tool_use_id: "toolu_task" }),
      assistant("msg_sub", "sub text", { parent_tool_use_id: "toolu_task" }),
      // Deltas tied by message_start only (no api_message_id), then the whole message: once.
      delta({ type: "text_delta", text: "Hel" }),
      delta({ type: "text_delta", text: "lo" }),
      delta({ type: "input_json_delta", partial_json: "{}" }),
      assistant("msg_a", "Hello"),
      // A message nothing streamed (e.g. a synthetic one): told whole.
      assistant("msg_b", " Whole."),
      // Deltas with no message id at all: the next assistant message is theirs.
      event({ type: "message_start", message: { content: [] } }),
      delta({ type: "text_delta", text: " Bye" }),
      assistant(undefined, " Bye"),
      ...rest.filter((message) => message.type === "result"),
    ];
    const seen: BackendTurnEvent[] = [];
    const fake = fakeQuery(() => ({ messages }));
    (await createClaudeAgentSdkBackend({ query: fake.query }).runTurn({ ...turn, cwd }, undefined, (event) => seen.push(event)))._unsafeUnwrap();
    expect(seen.map((event) => event.type === "text" && event.text)).toEqual(["Hel", "lo", " Whole.", " Bye"]);
  });

  it("reports the recorded streamed answer as deltas whose concatenation is the result's text", async () => {
    const seen: BackendTurnEvent[] = [];
    const fake = fakeQuery((options) => ({ messages: options.includePartialMessages ? inPieces(recorded("partial"), 5) : recorded("partial") }));
    const result = (await createClaudeAgentSdkBackend({ query: fake.query }).runTurn({ ...turn, cwd }, undefined, (event) => seen.push(event)))._unsafeUnwrap();
    const texts = seen.flatMap((event) => (event.type === "text" ? [event.text] : []));
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join("")).toBe(result.text);
    expect(result).toMatchObject({ text: "A one-sentence summary.", threadId: recorded("partial")[0]!.session_id });
    expect(result.usage).toMatchObject({ inputUncached: 500, cacheRead: 100, cacheWrite: 20, output: 30 });
  });

  it("registers a PostToolUse hook whose calls count once with the stream's, and add the calls the stream does not show", async () => {
    const messages = recorded("tool-calls");
    const sessionId = messages[0]!.session_id as string;
    const readResponse = { type: "text", file: { filePath: "/work/harbor/project/README.md", content: "# Harbor\nsecret lighthouse-42\n" } };
    const seen: BackendTurnEvent[] = [];
    const query: ClaudeAgentSdkQuery = ({ options }) => {
      const hook = options.hooks?.PostToolUse?.[0]?.hooks[0];
      const signal = new AbortController().signal;
      return (async function* () {
        yield messages[0];
        // The hook fires for the Read before its messages reach the stream, and for a subagent's
        // Grep that the stream never shows.
        expect(await hook!({ hook_event_name: "PostToolUse", session_id: sessionId, tool_name: "Read", tool_input: { file_path: "/work/harbor/project/README.md" }, tool_response: readResponse, tool_use_id: "toolu_0_0" }, "toolu_0_0", { signal })).toEqual({ continue: true });
        await hook!({ hook_event_name: "PostToolUse", session_id: sessionId, agent_id: "sub-1", tool_name: "Grep", tool_input: { pattern: "TODO", path: "src" }, tool_response: {}, tool_use_id: "toolu_sub_1" }, "toolu_sub_1", { signal });
        // A malformed call is ignored, never thrown.
        expect(await hook!({ hook_event_name: "PostToolUse" }, undefined, { signal })).toEqual({ continue: true });
        for (const message of messages.slice(1)) yield message;
      })();
    };
    const result = (await createClaudeAgentSdkBackend({ query }).runTurn({ ...turn, cwd }, undefined, (event) => seen.push(event)))._unsafeUnwrap();
    expect(result.toolCalls).toBe(3);
    expect(result.fileAccess).toEqual([
      { op: "read", path: "/work/harbor/project/README.md", tool: "Read", bytes: 30 },
      { op: "search", path: "src", tool: "Grep" },
      { op: "read", path: "README.md", tool: "Bash" },
    ]);
    expect(seen.filter((event) => event.type === "tool_call").map((event) => event.type === "tool_call" && event.tool)).toEqual(["Read", "Grep", "Bash"]);
  });

  it("reads Edit, Write, Grep and Glob calls as writes and searches", async () => {
    const [init] = recorded("success");
    const result = recorded("success").find((message) => message.type === "result")!;
    const call = (id: string, name: string, input: Record<string, unknown>) => ({
      type: "assistant",
      message: { role: "assistant", content: [{ type: "tool_use", id, name, input }] },
      session_id: init!.session_id,
    });
    const messages = [
      init,
      call("t1", "Edit", { file_path: "src/a.ts", old_string: "a", new_string: "b" }),
      call("t2", "Write", { file_path: "notes.md", content: "héllo" }),
      call("t3", "Grep", { pattern: "TODO", path: "src" }),
      call("t4", "Glob", { pattern: "**/*.md" }),
      call("t5", "WebFetch", { url: "https://example.com" }),
      result,
    ];
    const turnResult = (await createClaudeAgentSdkBackend({ query: fakeQuery(() => ({ messages })).query }).runTurn({ ...turn, cwd }))._unsafeUnwrap();
    expect(turnResult.toolCalls).toBe(5);
    expect(turnResult.fileAccess).toEqual([
      { op: "write", path: "src/a.ts", tool: "Edit" },
      { op: "write", path: "notes.md", tool: "Write", bytes: 6 },
      { op: "search", path: "src", tool: "Grep" },
      { op: "search", path: "**/*.md", tool: "Glob" },
    ]);
  });

  it("classifies an unknown resume id as resume_failed (startup_failure_reason), whatever the iterator throws after it", async () => {
    const fake = fakeQuery(() => ({ messages: recorded("resume-not-found"), stderr: "No conversation found with session ID: 6f1e3c1a-0000-4000-8000-000000000001\n" }));
    const threadId = "6f1e3c1a-0000-4000-8000-000000000001";
    const error = (await createClaudeAgentSdkBackend({ query: fake.query }).runTurn({ ...turn, cwd, threadId }))._unsafeUnwrapErr();
    expect(error.code).toBe("resume_failed");
    expect(error.details).toMatchObject({ backend: "claude-agent-sdk", threadId, resumeFailed: true });
    // The reason alone decides, without the CLI's words.
    const bare = [{ type: "result", subtype: "error_during_execution", is_error: true, errors: [], session_id: threadId, startup_failure_reason: "resume_target_not_found" }];
    const silent = (await createClaudeAgentSdkBackend({ query: fakeQuery(() => ({ messages: bare })).query }).runTurn({ ...turn, cwd, threadId }))._unsafeUnwrapErr();
    expect(silent.code).toBe("resume_failed");
  });

  it.each([
    ["provider-500", 500, true],
    ["provider-529", 529, true],
    ["provider-429", 429, true],
    ["provider-400", 400, false],
  ] as const)("reports a provider %s as backend_failed (status %i, retryable %s), the result kept over the iterator's throw", async (name, status, retryable) => {
    const error = (await createClaudeAgentSdkBackend({ query: fakeQuery(() => ({ messages: recorded(name) })).query }).runTurn({ ...turn, cwd }))._unsafeUnwrapErr();
    expect(error.code).toBe("backend_failed");
    expect(error.retryable).toBe(retryable);
    expect(error.details.apiErrorStatus).toBe(status);
    expect(error.message).toContain(`${status}`);
    expect(error.message).not.toContain("Claude Code returned an error result");
    expect(error.details.threadId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("reports a throw without a result as backend_failed, and a missing Claude Code binary as unavailable", async () => {
    const [init] = recorded("success");
    const crashed = fakeQuery(() => ({ messages: [init], throws: new Error("Claude Code process exited with code 1") }));
    const failed = (await createClaudeAgentSdkBackend({ query: crashed.query }).runTurn({ ...turn, cwd }))._unsafeUnwrapErr();
    expect(failed.code).toBe("backend_failed");
    expect(failed.details.threadId).toBe(init!.session_id);
    const missing = fakeQuery(() => ({ messages: [], throws: new Error("Claude Code native binary not found at /x/claude") }));
    expect((await createClaudeAgentSdkBackend({ query: missing.query }).runTurn({ ...turn, cwd }))._unsafeUnwrapErr().code).toBe("unavailable");
    const synchronous: ClaudeAgentSdkQuery = () => {
      throw new Error("spawn /x/claude ENOENT");
    };
    expect((await createClaudeAgentSdkBackend({ query: synchronous }).runTurn({ ...turn, cwd }))._unsafeUnwrapErr().code).toBe("unavailable");
  });

  it("times out: aborts the SDK's controller, closes the query, keeps the session id", async () => {
    const fake = fakeQuery(() => ({ messages: recorded("hang"), hang: true }));
    const error = (await createClaudeAgentSdkBackend({ query: fake.query }).runTurn({ ...turn, cwd, timeoutMs: 200 }))._unsafeUnwrapErr();
    expect(error.code).toBe("timeout");
    expect(error.details.threadId).toBe("001f0f15-b304-48c3-9b22-012fde54d1a2");
    expect(fake.calls[0]!.options.abortController.signal.aborted).toBe(true);
    expect(fake.closed()).toBe(1);
  });

  it("gives up on a query that does not end after an abort, after killGraceMs", async () => {
    const stuck: ClaudeAgentSdkQuery = () => ({
      async *[Symbol.asyncIterator]() {
        yield recorded("hang")[0];
        await new Promise(() => undefined);
      },
    });
    const controller = new AbortController();
    const running = createClaudeAgentSdkBackend({ query: stuck, killGraceMs: 50 }).runTurn({ ...turn, cwd }, controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect((await running)._unsafeUnwrapErr().code).toBe("aborted");
  });

  it("stages skills under .claude/skills in an additional directory, removed after the turn", async () => {
    const skill = join(cwd, "skills", "review");
    await mkdir(skill, { recursive: true });
    await writeFile(join(skill, "SKILL.md"), "---\nname: review\ndescription: Reviews diffs.\n---\n");
    let seen: string[] = [];
    let staged = "";
    const fake = fakeQuery((options) => {
      seen = options.additionalDirectories ?? [];
      staged = readFileSync(join(seen[0]!, ".claude", "skills", "review", "SKILL.md"), "utf8");
      return { messages: recorded("success") };
    });
    (await createClaudeAgentSdkBackend({ query: fake.query }).runTurn({ ...turn, cwd, skillPaths: [skill] }))._unsafeUnwrap();
    expect(seen).toHaveLength(1);
    expect(staged).toContain("Reviews diffs.");
    expect(() => readFileSync(join(seen[0]!, ".claude", "skills", "review", "SKILL.md"))).toThrow();
    // With `prompt` delivery (no project settings) the paths are not staged.
    const bare = fakeQuery((options) => {
      seen = options.additionalDirectories ?? [];
      return { messages: recorded("success") };
    });
    (await createClaudeAgentSdkBackend({ query: bare.query, settingSources: ["user"] }).runTurn({ ...turn, cwd, skillPaths: [skill] }))._unsafeUnwrap();
    expect(seen).toEqual([]);
  });

  it("refuses bad options with invalid_input at once", () => {
    const bad: unknown[] = [
      { query: "query" },
      { permissionMode: "yolo" },
      { settingSources: ["global"] },
      { systemPrompt: { type: "preset", preset: "other" } },
      { maxTurns: 0 },
      { env: { "BAD-NAME": "x" } },
      { model: "--flag" },
      { nonsense: true },
      { sessionStore: { append: async () => undefined } },
    ];
    for (const options of bad) {
      expect(() => createClaudeAgentSdkBackend(options as never), JSON.stringify(options)).toThrow(expect.objectContaining({ code: "invalid_input" }));
    }
    expect(() => createClaudeAgentSdkBackend({ env: process.env as Record<string, string> })).not.toThrow();
  });

  it("loads the SDK on demand: a missing package is unavailable, not retryable, naming the install line", async () => {
    const missing = Object.assign(new Error("Cannot find package '@anthropic-ai/claude-agent-sdk' imported from /x.js"), { code: "ERR_MODULE_NOT_FOUND" });
    await expect(loadClaudeAgentSdkQuery(() => Promise.reject(missing))).rejects.toMatchObject({ code: "unavailable", retryable: false, details: { install: "npm install @anthropic-ai/claude-agent-sdk" } });
    await expect(loadClaudeAgentSdkQuery(() => Promise.reject(new Error("bad native build")))).rejects.toMatchObject({ code: "unavailable" });
    await expect(loadClaudeAgentSdkQuery(() => Promise.resolve({ query: 1 }))).rejects.toMatchObject({ code: "unavailable" });
    const query: ClaudeAgentSdkQuery = () => ({ async *[Symbol.asyncIterator]() {} });
    expect(await loadClaudeAgentSdkQuery(() => Promise.resolve({ query }))).toBe(query);
  });
});

describeBackendConformance({
  name: "claude-agent-sdk (recorded SDK messages)",
  resumable: true,
  scenarios: ["success", "unknown_events", "in_band_error", "transient_error", "garbage", "hang", "tool_read"],
  unknownThreadId: "6f1e3c1a-0000-4000-8000-000000000001",
  toolReadPath: "README.md",
  hangTimeoutMs: 300,
  expectedUsage: { fresh: { inputUncached: 900, cacheRead: 300, cacheWrite: 50, output: 12, reasoning: null, costUsd: 0.0031575 } },
  setup: async () => {
    const cwd = await mkdtemp(join(tmpdir(), "keel-agent-sdk-conformance-"));
    await writeFile(join(cwd, "README.md"), "# Harbor\n");
    // Each fresh turn gets a session id of its own, a resumed one keeps it (as the SDK does); the
    // recorded Read names the recording's path, here it reads this harness's README.
    const retarget = (play: Play, sessionId: string): Play => {
      const recordedIds = new Set(play.messages.map((message) => (message as { session_id?: unknown } | null)?.session_id).filter((id): id is string => typeof id === "string"));
      let text = JSON.stringify(play.messages).replaceAll("/work/harbor/project", cwd);
      for (const id of recordedIds) text = text.replaceAll(id, sessionId);
      return { ...play, messages: JSON.parse(text) as unknown[] };
    };
    const fake = fakeQuery((options, prompt) => {
      if (options.resume === "6f1e3c1a-0000-4000-8000-000000000001") return { messages: recorded("resume-not-found") };
      if (options.resume !== undefined) return retarget({ messages: recorded("resumed") }, options.resume);
      const scenario = (/^KEEL-PLAY:(\w+)/.exec(prompt)?.[1] ?? "success") as BackendConformanceScenario;
      return retarget(SCENARIOS[scenario](), randomUUID());
    });
    return {
      backend: createClaudeAgentSdkBackend({ query: fake.query }),
      cwd,
      scenario: (scenario) => ({ prompt: `KEEL-PLAY:${scenario} Summarize the README.` }),
      cleanup: () => rm(cwd, { recursive: true, force: true }),
    };
  },
});
