import { createEventBus, KeelError, type KeelEvent, type Usage } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { errAsync } from "neverthrow";
import { describe, expect, it } from "vitest";
import { compactAgentHistory } from "./agent-history.js";
import { compact } from "./compaction-compact.js";
import { planCompaction } from "./compaction-plan.js";
import type { TranscriptEntry, TranscriptEntryInput } from "./entry-schema.js";
import type { Summarizer, SummaryRequest } from "./summarizer.js";
import { openTranscript, type Transcript } from "./transcript-open.js";

/** Counts characters: one token a character, so budgets in tests read plainly. */
const chars = (text: string) => text.length;
const usage: Usage = { inputUncached: 100, cacheRead: 0, cacheWrite: 0, output: 20, reasoning: null, costUsd: 0.01 };
const GOOD = "## Goal\nG\n\n## Progress\nP\n\n## Next Steps\n1. N";
const PREFIX = "## Original Request\nR";
const BRANCH = "## Goal\nB\n\n## Progress\nP";

function recordingSummarizer(answers: Partial<Record<SummaryRequest["kind"], string>> = {}): { summarizer: Summarizer; requests: SummaryRequest[] } {
  const requests: SummaryRequest[] = [];
  const summarizer: Summarizer = async (request) => {
    requests.push(request);
    const text = answers[request.kind] ?? (request.kind === "history" ? GOOD : request.kind === "turn_prefix" ? PREFIX : BRANCH);
    return { text, usage };
  };
  return { summarizer, requests };
}

const user = (text: string): TranscriptEntryInput => ({ type: "message", message: { role: "user", content: text, timestamp: 1 } });
const reply = (text: string): TranscriptEntryInput => ({ type: "message", message: { role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m", timestamp: 2 } });
const call = (id: string, name: string, args: Record<string, unknown>): TranscriptEntryInput => ({
  type: "message",
  message: { role: "assistant", content: [{ type: "toolCall", id, name, arguments: args }], provider: "p", model: "m", timestamp: 2 },
});
const result = (id: string, text: string): TranscriptEntryInput => ({ type: "message", message: { role: "toolResult", toolCallId: id, toolName: "t", content: [{ type: "text", text }], timestamp: 3 } });

async function transcriptOf(inputs: TranscriptEntryInput[]): Promise<Transcript> {
  const transcript = (await openTranscript({ store: createMemoryStore(), sessionId: "c" }))._unsafeUnwrap();
  for (const input of inputs) (await transcript.append(input))._unsafeUnwrap();
  return transcript;
}

const plan = (path: TranscriptEntry[], keepRecentTokens: number) => planCompaction(path, { keepRecentTokens, reserveTokens: 1000, estimator: chars })._unsafeUnwrap();

describe("planCompaction", () => {
  it("answers null when the context fits, when the leaf is a compaction, or with nothing before the cut", async () => {
    const transcript = await transcriptOf([user("aaaa"), reply("bbbb")]);
    expect(plan(transcript.path()._unsafeUnwrap(), 100)).toBeNull();
    expect(plan([], 1)).toBeNull();
    // The whole context is one turn's first message: there is nothing before it.
    const single = await transcriptOf([user("a".repeat(50))]);
    expect(plan(single.path()._unsafeUnwrap(), 10)).toBeNull();
    expect(planCompaction([], { keepRecentTokens: -1, reserveTokens: 0 })._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("cuts at a turn start, counting custom messages, branch summaries and images", async () => {
    const transcript = await transcriptOf([
      user("old question"),
      reply("old answer"),
      { type: "model_change", provider: "p", modelId: "m2" },
      user("new question"),
      { type: "custom_message", customType: "x", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], display: true },
    ]);
    const path = transcript.path()._unsafeUnwrap();
    const planned = plan(path, 1200)!;
    // The image alone costs 1,200 tokens: the budget is crossed at the custom message, the cut is there.
    expect(planned.firstKeptEntryId).toBe(path[4]!.id);
    expect(planned.isSplitTurn).toBe(false);
    const smaller = plan(path, 1205)!;
    // A model change right before the user message does not make the clean boundary a split turn.
    expect(smaller.firstKeptEntryId).toBe(path[3]!.id);
    expect(smaller.isSplitTurn).toBe(false);
    expect(smaller.history.entryIds).toEqual([path[0]!.id, path[1]!.id]);
  });

  it("never cuts between a tool call and its result, and splits a long turn at an assistant message", async () => {
    const transcript = await transcriptOf([
      user("q1"),
      reply("a1"),
      user("do the long thing"),
      call("c1", "read", { path: "./src/a.ts" }),
      result("c1", "x".repeat(100)),
      call("c2", "edit", { file_path: "/work/src/b.ts" }),
      result("c2", "y".repeat(100)),
      reply("done"),
    ]);
    const path = transcript.path()._unsafeUnwrap();
    const planned = planCompaction(path, { keepRecentTokens: 150, reserveTokens: 100, estimator: chars, cwd: "/work" })._unsafeUnwrap()!;
    // Crossing at the first result (index 4) would cut a pair; the first legal cut after it is c2's call.
    expect(planned.firstKeptEntryId).toBe(path[5]!.id);
    expect(planned.isSplitTurn).toBe(true);
    expect(planned.turnStartEntryId).toBe(path[2]!.id);
    expect(planned.history.entryIds).toEqual([path[0]!.id, path[1]!.id]);
    expect(planned.turnPrefix.entryIds).toEqual([path[2]!.id, path[3]!.id, path[4]!.id]);
    expect(planned.files).toEqual({ readFiles: ["src/a.ts"], modifiedFiles: [] });
    expect(planned.summaryMaxTokens).toBe(80);
    expect(planned.turnPrefixMaxTokens).toBe(50);
  });

  it("carries the previous compaction forward: its kept entries are summarized again or kept", async () => {
    const transcript = await transcriptOf([user("q1".repeat(100)), reply("a1".repeat(100)), user("q2".repeat(100)), reply("a2".repeat(100))]);
    const compacted = await transcript.compact({ summarizer: recordingSummarizer().summarizer, keepRecentTokens: 300, reserveTokens: 100, estimator: chars });
    if (compacted.isErr()) throw compacted.error;
    const first = compacted.value!;
    const path = transcript.path()._unsafeUnwrap();
    expect(first.firstKeptEntryId).toBe(path[2]!.id);
    for (const input of [user("q3".repeat(100)), reply("a3".repeat(100))]) (await transcript.append(input))._unsafeUnwrap();
    const second = plan(transcript.path()._unsafeUnwrap(), 300)!;
    expect(second.previousSummary).toBe(first.summary);
    expect(second.history.entryIds).toContain(path[2]!.id);
    expect(second.history.entryIds).toContain(path[3]!.id);
  });
});

describe("compact", () => {
  it("asks for the history and the turn prefix with the custom instructions, and records usage and tokens", async () => {
    const transcript = await transcriptOf([user("q1"), reply("a1"), user("long"), call("c1", "read", { path: "a" }), result("c1", "x".repeat(2000)), reply("z".repeat(200))]);
    const planned = plan(transcript.path()._unsafeUnwrap(), 150)!;
    expect(planned.isSplitTurn).toBe(true);
    const { summarizer, requests } = recordingSummarizer();
    const compacted = await compact(planned, summarizer, { customInstructions: "focus on tests", estimator: chars });
    if (compacted.isErr()) throw compacted.error;
    const entry = compacted.value;
    expect(requests.map((request) => request.kind).sort()).toEqual(["history", "turn_prefix"]);
    for (const request of requests) expect(request.prompt).toContain("Additional focus: focus on tests");
    expect(requests.find((request) => request.kind === "history")!.prompt).toContain("[User]: q1");
    expect(entry.summary).toContain("**Turn Context (split turn):**");
    expect(entry.summary).toContain("<read-files>\na\n</read-files>");
    expect(entry.summarizerUsage).toEqual({ ...usage, inputUncached: 200, output: 40, costUsd: 0.02 });
    expect(entry.tokensBefore).toBe(planned.tokensBefore);
    expect(entry.tokensAfter).toBeLessThan(entry.tokensBefore);
  });

  it("refuses an empty or malformed summary, a failed summarizer and a compaction that does not shrink", async () => {
    const transcript = await transcriptOf([user("q".repeat(300)), reply("a".repeat(300)), user("q2"), reply("a2")]);
    const planned = plan(transcript.path()._unsafeUnwrap(), 4)!;
    const empty = (await compact(planned, recordingSummarizer({ history: "  " }).summarizer))._unsafeUnwrapErr();
    expect([empty.code, empty.details["reason"]]).toEqual(["invalid_input", "empty"]);
    const malformed = (await compact(planned, recordingSummarizer({ history: "just prose" }).summarizer))._unsafeUnwrapErr();
    expect([malformed.code, malformed.details["reason"]]).toEqual(["invalid_input", "malformed"]);
    expect((await compact(planned, async () => { throw new Error("down"); }))._unsafeUnwrapErr().code).toBe("backend_failed");
    // A summarizer answering a ResultAsync passes its error through.
    expect((await compact(planned, () => errAsync(new KeelError("unavailable", "busy"))))._unsafeUnwrapErr().code).toBe("unavailable");
    const huge = (await compact(planned, recordingSummarizer({ history: `${GOOD}\n${"w".repeat(2000)}` }).summarizer, { estimator: chars }))._unsafeUnwrapErr();
    expect(huge.details["reason"]).toBe("not_smaller");
  });

  it("lets a hook cancel or supply the summary, and emits transcript.compacted", async () => {
    const events = createEventBus();
    const seen: KeelEvent[] = [];
    events.on("*", (event) => seen.push(event));
    const transcript = (await openTranscript({ store: createMemoryStore(), sessionId: "h", events }))._unsafeUnwrap();
    for (const input of [user("q".repeat(300)), reply("a".repeat(300)), user("q2"), reply("a2")]) (await transcript.append(input))._unsafeUnwrap();
    const base = { summarizer: recordingSummarizer().summarizer, keepRecentTokens: 4, reserveTokens: 100, estimator: chars };
    const cancelled = (await transcript.compact({ ...base, hooks: { beforeCompaction: () => ({ action: "cancel", reason: "not now" }) } }))._unsafeUnwrapErr();
    expect(cancelled.code).toBe("aborted");
    expect(transcript.tree().size).toBe(4);
    const supplied = (await transcript.compact({ ...base, hooks: { beforeCompaction: async () => ({ action: "supply", summary: "from the hook" }) } }))._unsafeUnwrap()!;
    expect(supplied.source).toBe("hook");
    expect(supplied.summary).toBe("from the hook");
    expect(seen.map((event) => event.type)).toEqual(["transcript.compacted"]);
    expect(transcript.buildContext()._unsafeUnwrap().compactionId).toBe(supplied.id);
    expect((await transcript.compact(base))._unsafeUnwrap()).toBeNull();
  });
});

describe("navigate", () => {
  it("moves the leaf without injecting anything, or attaches a branch summary at the target", async () => {
    const transcript = await transcriptOf([user("q1"), reply("a1")]);
    const [q1, a1] = transcript.path()._unsafeUnwrap();
    for (const input of [user("explore"), call("c1", "write", { path: "/x/new.ts" }), result("c1", "ok")]) (await transcript.append(input))._unsafeUnwrap();
    const oldLeaf = transcript.leafId()!;
    const before = structuredClone(transcript.tree().entries());
    const plain = (await transcript.navigate(a1!.id))._unsafeUnwrap();
    expect(plain).toEqual({ leafId: a1!.id, branchSummary: undefined, abandonedEntryIds: expect.any(Array) });
    expect(plain.abandonedEntryIds).toHaveLength(3);
    expect(transcript.buildContext()._unsafeUnwrap().messages).toHaveLength(2);
    (await transcript.setLeaf(oldLeaf))._unsafeUnwrap();
    const { summarizer, requests } = recordingSummarizer();
    const summarized = (await transcript.navigate(q1!.id, { summarize: summarizer, customInstructions: "be brief", cwd: "/x" }))._unsafeUnwrap();
    expect(requests).toHaveLength(1);
    expect(requests[0]!.prompt).toContain("Additional focus: be brief");
    expect(summarized.branchSummary?.parentId).toBe(q1!.id);
    expect(summarized.branchSummary?.fromId).toBe(oldLeaf);
    expect(summarized.branchSummary?.details).toEqual({ readFiles: [], modifiedFiles: ["new.ts"] });
    expect(transcript.leafId()).toBe(summarized.branchSummary?.id);
    const context = transcript.buildContext()._unsafeUnwrap();
    expect(context.messages).toHaveLength(2);
    expect(JSON.stringify(context.messages[1])).toContain("explored a different conversation branch");
    expect(transcript.tree().entries().slice(0, before.length)).toEqual(before);
  });

  it("lets a hook cancel or supply, and answers not_found for an unknown target", async () => {
    const transcript = await transcriptOf([user("q1"), reply("a1"), user("q2")]);
    const [q1] = transcript.path()._unsafeUnwrap();
    const leaf = transcript.leafId();
    expect((await transcript.navigate(q1!.id, { hooks: { beforeNavigation: () => ({ action: "cancel" }) } }))._unsafeUnwrapErr().code).toBe("aborted");
    expect(transcript.leafId()).toBe(leaf);
    const supplied = (await transcript.navigate(q1!.id, { hooks: { beforeNavigation: (event) => ({ action: "supply", summary: `left ${event.abandoned.length}` }) } }))._unsafeUnwrap();
    expect(supplied.branchSummary?.source).toBe("hook");
    expect(supplied.branchSummary?.summary).toContain("left 2");
    expect((await transcript.navigate("ghost"))._unsafeUnwrapErr().code).toBe("not_found");
    expect((await transcript.navigate(q1!.id, { hooks: { beforeNavigation: () => ({ action: "supply", summary: "" }) } }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

describe("compactAgentHistory", () => {
  it("keeps the newest items first, cuts texts from the start and bounds the total", () => {
    const items = Array.from({ length: 50 }, (_, index) => ({ text: `${index}:${"x".repeat(index === 49 ? 3000 : 10)}`, at: index }));
    const compacted = compactAgentHistory(items)._unsafeUnwrap();
    expect(compacted.items).toHaveLength(40);
    expect(compacted.omitted).toBe(10);
    expect(compacted.items[0]!.at).toBe(10);
    const last = compacted.items[39]!;
    expect(last.text).toHaveLength(2000);
    expect(last.text.startsWith("…")).toBe(true);
    expect(last.text.endsWith("x")).toBe(true);
    expect(compacted.truncated).toBe(1);
    const tight = compactAgentHistory(items, { maxTotalChars: 2050 })._unsafeUnwrap();
    expect(tight.items.map((item) => item.at)).toEqual([46, 47, 48, 49]);
    expect(compactAgentHistory([{ nope: 1 } as never])._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(compactAgentHistory(items, { maxEntries: 0 })._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

describe("bad input to the pure functions", () => {
  it("answers invalid_input instead of throwing", async () => {
    const { createTranscriptTree } = await import("./transcript-tree.js");
    const { exportPiSession } = await import("./pi-session-export.js");
    expect(planCompaction(null as never, { keepRecentTokens: 1, reserveTokens: 1 })._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await compact({} as never, recordingSummarizer().summarizer))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await compact(null as never, null as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(createTranscriptTree("x" as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(createTranscriptTree([{ type: "message", id: "a", parentId: null, timestamp: "t" } as never])._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(exportPiSession(null as never)._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
