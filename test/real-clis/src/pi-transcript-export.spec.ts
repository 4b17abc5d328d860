// Issue 17's last check: a Keel transcript exported with `exportPiSession` is a pi v3 session
// file that pi's own SessionManager opens to the same context, and that the real pi CLI
// (`pi --session <id>` through Keel's pi adapter, against the fake provider) continues: the
// request it sends carries the exported history, and the turn it appends reads back into Keel.
import { copyFile, mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { convertToLlm, SessionManager } from "@mariozechner/pi-coding-agent";
import { createMemoryStore } from "@keel/store";
import { exportPiSession, importPiSession, openTranscript, type Transcript } from "@keel/transcript";
import { startFakeProvider, type FakeProvider, type FakeProviderRequest, type FakeReply } from "@keel/testkit/provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REAL_CLI_VERSIONS } from "./cli-sandbox.js";
import { createRealCliSetup, type RealCliSetup } from "./cli-setups.js";

/** A session id of pi's own shape (a UUID), so `--session <id>` is looked up as an id, not a path. */
const SESSION_ID = "01a23360-0000-7000-8000-00000000e4b0";

/** Distinctive strings of the exported history, in the order pi must send them. */
const BEFORE_CUT = ["Earliest question: quartz-meadow?", "Earliest answer: quartz-meadow is summarized."];
const KEPT = [
  "Compacted summary: the user studies harbor-ledger-77.",
  "Kept question: list the cobalt-anchor files.",
  "echo cobalt-anchor-call",
  "cobalt-anchor-output-31",
  "Kept answer: cobalt-anchor has one file.",
  "Later question: and the tide-marker-58?",
  "Later answer: tide-marker-58 is high.",
];
const NEW_PROMPT = "New question after export: what about saffron-pier-12?";
const NEW_REPLY = "Continued answer: saffron-pier-12 is open.";

const usage = (input: number, output: number) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + output,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const assistant = (content: unknown[], stopReason: string, timestamp: number) => ({
  role: "assistant" as const,
  content: content as never,
  api: "openai-completions",
  provider: "fake",
  model: "fake-model",
  usage: usage(100 + timestamp, 10 + timestamp),
  stopReason,
  timestamp,
});

/** A Keel transcript with a model change, a tool call and its result, and a compaction that cuts off the first turn. */
async function buildTranscript(): Promise<Transcript> {
  const transcript = (await openTranscript({ store: createMemoryStore(), sessionId: "keel-export" }))._unsafeUnwrap();
  const append = async (entry: Parameters<Transcript["append"]>[0]) => (await transcript.append(entry))._unsafeUnwrap();
  await append({ type: "model_change", provider: "fake", modelId: "fake-model" });
  await append({ type: "message", message: { role: "user", content: BEFORE_CUT[0] as string, timestamp: 1 } });
  await append({ type: "message", message: assistant([{ type: "text", text: BEFORE_CUT[1] }], "stop", 2) });
  const kept = await append({ type: "message", message: { role: "user", content: KEPT[1] as string, timestamp: 3 } });
  await append({
    type: "message",
    message: assistant([{ type: "toolCall", id: "call_cobalt_1", name: "bash", arguments: { command: KEPT[2] } }], "toolUse", 4),
  });
  await append({
    type: "message",
    message: { role: "toolResult", toolCallId: "call_cobalt_1", toolName: "bash", content: [{ type: "text", text: KEPT[3] as string }], isError: false, timestamp: 5 },
  });
  await append({ type: "message", message: assistant([{ type: "text", text: KEPT[4] }], "stop", 6) });
  await append({ type: "compaction", summary: KEPT[0] as string, firstKeptEntryId: kept.id, tokensBefore: 900, tokensAfter: 300, source: "summarizer" });
  await append({ type: "message", message: { role: "user", content: KEPT[5] as string, timestamp: 7 } });
  await append({ type: "message", message: assistant([{ type: "text", text: KEPT[6] }], "stop", 8) });
  return transcript;
}

/** Where pi looks up `--session <id>` for a cwd: `<agent dir>/sessions/--<cwd, slashes as dashes>--/` (pi's getDefaultSessionDir). */
function piSessionDir(agentDir: string, cwd: string): string {
  return join(agentDir, "sessions", `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
}

/** The index of each needle in `text`, searching each after the previous one (-1 when one is missing or out of order). */
function positionsInOrder(text: string, needles: readonly string[]): number[] {
  let from = 0;
  return needles.map((needle) => {
    const at = text.indexOf(needle, from);
    if (at >= 0) from = at + needle.length;
    return at;
  });
}

describe(`pi ${REAL_CLI_VERSIONS.pi} continues a session Keel exported (real CLI, offline)`, () => {
  let provider: FakeProvider;
  let setup: RealCliSetup;
  let respond: (request: FakeProviderRequest) => FakeReply | undefined = () => undefined;
  let transcript: Transcript;
  let cwd: string;
  let file: string;
  let exported: string;

  beforeAll(async () => {
    provider = (await startFakeProvider({ respond: (request) => setup.sideCall(request) ?? respond(request) }))._unsafeUnwrap();
    setup = await createRealCliSetup("pi", provider);
    cwd = await realpath(setup.sandbox.cwd);
    transcript = await buildTranscript();
    exported = exportPiSession(transcript, { cwd, sessionId: SESSION_ID })._unsafeUnwrap();
    const dir = piSessionDir(setup.env.PI_CODING_AGENT_DIR as string, cwd);
    await mkdir(dir, { recursive: true });
    file = join(dir, `2026-01-01T00-00-00-000Z_${SESSION_ID}.jsonl`);
    await writeFile(file, exported);
  });
  afterAll(async () => {
    await provider.close();
    await setup.sandbox.cleanup();
  });

  it("is a v3 file that pi's SessionManager opens to the context Keel builds", async () => {
    expect(JSON.parse(exported.split("\n")[0] as string)).toMatchObject({ type: "session", version: 3, id: SESSION_ID, cwd });
    const copy = join(setup.sandbox.tmp, "copy.jsonl");
    await copyFile(file, copy);
    const manager = SessionManager.open(copy);
    const pi = manager.buildSessionContext();
    const keel = transcript.buildContext()._unsafeUnwrap();
    expect(manager.getSessionId()).toBe(SESSION_ID);
    expect(manager.getLeafId()).toBe(transcript.leafId());
    expect(convertToLlm(pi.messages)).toEqual(keel.messages);
    expect(pi.model).toEqual(keel.model);
  });

  it("is continued by `pi --session <id>`: the request carries the exported history, then the new prompt", async () => {
    const from = provider.requests.length;
    const queue: FakeReply[] = [{ text: NEW_REPLY, usage: { inputUncached: 420, cacheRead: 0, output: 12 } }];
    respond = () => queue.shift() ?? { error: { status: 400, message: "fake provider: the test scripted no more calls for this turn" } };
    const result = await setup.backend.runTurn({ prompt: NEW_PROMPT, cwd, threadId: SESSION_ID, timeoutMs: 120_000, env: {} });
    if (result.isErr()) throw new Error(`expected a successful turn, got ${result.error.code}: ${result.error.message}`);
    expect(result.value.threadId).toBe(SESSION_ID);
    expect(result.value.text).toContain(NEW_REPLY);

    const calls = provider.requests.slice(from).filter((call) => call.format !== null && !setup.isSideCall(call));
    expect(calls).toHaveLength(1);
    const text = calls[0]?.text ?? "";
    // Everything the compaction kept, in order, then the new prompt; nothing of the summarized turn.
    const positions = positionsInOrder(text, [...KEPT, NEW_PROMPT]);
    expect(positions, text).not.toContain(-1);
    for (const cut of BEFORE_CUT) expect(text).not.toContain(cut);
    // The tool call went out as a tool call with its result paired (pi's openai-completions shape).
    const messages = (calls[0]?.body as { messages?: Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }> }).messages ?? [];
    const callMessage = messages.find((message) => message.tool_calls?.some((call) => call.id === "call_cobalt_1"));
    const resultMessage = messages.find((message) => message.role === "tool" && message.tool_call_id === "call_cobalt_1");
    expect(callMessage).toBeDefined();
    expect(resultMessage).toBeDefined();
    expect(messages.indexOf(resultMessage!)).toBeGreaterThan(messages.indexOf(callMessage!));
    expect(messages.at(-1)).toMatchObject({ role: "user" });
    expect(provider.failures.filter((failure) => failure.kind === "outside_host" || failure.kind === "unknown_route")).toEqual([]);
  });

  it("appended pi's turn to the exported file, and importPiSession reads it back on the path", async () => {
    const continued = await readFile(file, "utf8");
    expect(continued.startsWith(exported)).toBe(true);
    const imported = importPiSession(continued, { strict: true })._unsafeUnwrap();
    expect(imported.diagnostics).toEqual([]);
    expect(imported.header.id).toBe(SESSION_ID);
    const exportedLeaf = transcript.leafId() as string;
    const path = imported.tree().path(imported.leafId())._unsafeUnwrap();
    const ids = path.map((entry) => entry.id);
    // The old path is a prefix of the new one; pi's new entries follow the exported leaf.
    const oldIds = transcript.path()._unsafeUnwrap().map((entry) => entry.id);
    expect(ids.slice(0, oldIds.length)).toEqual(oldIds);
    expect(ids.indexOf(exportedLeaf)).toBe(oldIds.length - 1);
    const added = path.slice(oldIds.length).filter((entry) => entry.type === "message");
    expect(added.map((entry) => (entry as { message?: { role?: string } }).message?.role)).toEqual(["user", "assistant"]);
    expect(JSON.stringify(added[0])).toContain(NEW_PROMPT);
    expect(JSON.stringify(added[1])).toContain(NEW_REPLY);
    // Keel's context of the continued file: the exported context, then the new turn.
    const before = transcript.buildContext()._unsafeUnwrap().messages;
    const after = imported.buildContext()._unsafeUnwrap().messages;
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 2);
  });
});
