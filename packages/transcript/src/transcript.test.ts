import { createManualClock } from "@keel/core";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { describe, expect, it } from "vitest";
import { COMPACTION_SUMMARY_PREFIX, EXCLUDED_OUTPUT_TEXT } from "./context-build.js";
import { entriesKey, headKey } from "./transcript-head.js";
import { openTranscript, type Transcript } from "./transcript-open.js";

let counter = 0;
const ids = () => `e${++counter}`;

async function open(store: KeelStore, sessionId = "s1"): Promise<Transcript> {
  return (await openTranscript({ store, sessionId, newEntryId: ids, clock: createManualClock(1_000) }))._unsafeUnwrap();
}

const user = (text: string) => ({ type: "message" as const, message: { role: "user" as const, content: text, timestamp: 1 } });
const assistant = (text: string) => ({
  type: "message" as const,
  message: { role: "assistant" as const, content: [{ type: "text" as const, text }], provider: "p", model: "m", usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 }, timestamp: 2 },
});

describe("openTranscript on a store", () => {
  it("projects model, thinking level, the latest compaction and excluded output", async () => {
    const transcript = await open(createMemoryStore());
    (await transcript.append({ type: "model_change", provider: "a", modelId: "b" }))._unsafeUnwrap();
    (await transcript.append({ type: "thinking_change", thinkingLevel: "high" }))._unsafeUnwrap();
    (await transcript.append(user("one")))._unsafeUnwrap();
    (await transcript.append(assistant("two")))._unsafeUnwrap();
    const kept = (await transcript.append(user("three")))._unsafeUnwrap();
    (await transcript.append({ type: "custom", customType: "state", data: { x: 1 } }))._unsafeUnwrap();
    (await transcript.append({ type: "compaction", summary: "S", firstKeptEntryId: kept.id, tokensBefore: 10 }))._unsafeUnwrap();
    (await transcript.append({ type: "custom_message", customType: "note", content: "visible", display: false }))._unsafeUnwrap();
    (await transcript.append({ type: "message", message: { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "secret" }], excludeFromContext: true } }))._unsafeUnwrap();
    (await transcript.append({ type: "message", message: { role: "bashExecution", command: "ls", output: "x", excludeFromContext: true } }))._unsafeUnwrap();
    const context = transcript.buildContext()._unsafeUnwrap();
    expect(context.thinkingLevel).toBe("high");
    // The assistant message after the model change names the model in force, as in pi.
    expect(context.model).toEqual({ provider: "p", modelId: "m" });
    expect(context.messages).toHaveLength(4);
    expect(JSON.stringify(context.messages[0])).toContain(COMPACTION_SUMMARY_PREFIX.slice(0, 20));
    expect(context.messages[1]).toMatchObject({ role: "user", content: "three" });
    expect(context.messages[2]).toMatchObject({ role: "user", content: [{ type: "text", text: "visible" }] });
    expect(context.messages[3]).toMatchObject({ role: "toolResult", content: [{ type: "text", text: EXCLUDED_OUTPUT_TEXT }] });
    expect(context.entryIds[1]).toBe(kept.id);
  });

  it("sets and clears labels, and keeps an unknown entry type from a newer writer", async () => {
    const store = createMemoryStore();
    const transcript = await open(store);
    const first = (await transcript.append(user("hi")))._unsafeUnwrap();
    (await transcript.setLabel(first.id, "start"))._unsafeUnwrap();
    expect(transcript.label(first.id)).toBe("start");
    (await transcript.setLabel(first.id, undefined))._unsafeUnwrap();
    expect(transcript.label(first.id)).toBeUndefined();
    const leaf = transcript.leafId();
    const future = { type: "bookmark_v9", id: "future-1", parentId: leaf, timestamp: "2030-01-01T00:00:00.000Z", extra: { a: [1] } };
    (await store.logs.append(entriesKey("s1"), [{ id: "future-1", value: future }]))._unsafeUnwrap();
    const reopened = await open(store);
    expect(reopened.tree().get("future-1")).toEqual(future);
    expect(reopened.leafId()).toBe("future-1");
    expect(reopened.buildContext()._unsafeUnwrap().messages).toHaveLength(1);
  });

  it("answers bad input with typed errors", async () => {
    const store = createMemoryStore();
    expect((await openTranscript({ store, sessionId: "../x" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await openTranscript({ store, sessionId: "missing", create: false }))._unsafeUnwrapErr().code).toBe("not_found");
    const transcript = await open(store);
    expect((await transcript.append({ type: "nope" } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await transcript.append({ type: "message", message: { role: "user" } } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await transcript.setLeaf("ghost"))._unsafeUnwrapErr().code).toBe("not_found");
    expect((await transcript.setLabel("ghost", "x"))._unsafeUnwrapErr().code).toBe("not_found");
    expect(transcript.path("ghost")._unsafeUnwrapErr().code).toBe("not_found");
    expect(transcript.children("ghost")._unsafeUnwrapErr().code).toBe("not_found");
    const first = (await transcript.append(user("a")))._unsafeUnwrap();
    expect((await transcript.append({ ...user("b"), id: first.id }))._unsafeUnwrapErr().code).toBe("conflict");
    expect((await transcript.append({ type: "compaction", summary: "s", firstKeptEntryId: "ghost", tokensBefore: 1 }))._unsafeUnwrapErr().code).toBe("invalid_input");
    // A second writer on the same session: the stale one gets conflict, never an interleaved tree.
    const second = await open(store);
    (await second.append(user("from the other writer")))._unsafeUnwrap();
    expect((await transcript.append(user("stale")))._unsafeUnwrapErr().code).toBe("conflict");
    // A corrupt record and a newer format are refused on open.
    (await store.logs.append(entriesKey("bad"), [{ id: "x", value: { type: "message", id: "x", parentId: null, timestamp: "t", message: { role: "user" } } }]))._unsafeUnwrap();
    expect((await openTranscript({ store, sessionId: "bad" }))._unsafeUnwrapErr().code).toBe("corrupt");
    (await store.logs.append(entriesKey("orphan"), [{ id: "y", value: { type: "custom", id: "y", parentId: "nobody", timestamp: "t", customType: "c" } }]))._unsafeUnwrap();
    expect((await openTranscript({ store, sessionId: "orphan" }))._unsafeUnwrapErr().code).toBe("corrupt");
    (await store.docs.put(headKey("newer"), { format: "keel.transcript", formatVersion: 99, sessionId: "newer", leafId: null, atSeq: 0, createdAt: "t" }, { create: true }))._unsafeUnwrap();
    expect((await openTranscript({ store, sessionId: "newer" }))._unsafeUnwrapErr().code).toBe("unsupported");
  });

  it("forks the path into a new session that records its parent session and entry", async () => {
    const store = createMemoryStore();
    const transcript = await open(store);
    const first = (await transcript.append(user("a")))._unsafeUnwrap();
    (await transcript.append(assistant("b")))._unsafeUnwrap();
    const fork = (await transcript.fork({ sessionId: "child", fromId: first.id }))._unsafeUnwrap();
    expect(fork.parent).toEqual({ sessionId: "s1", entryId: first.id });
    expect(fork.tree().entries()).toEqual([first]);
    expect(fork.leafId()).toBe(first.id);
    const reopened = (await openTranscript({ store, sessionId: "child", create: false }))._unsafeUnwrap();
    expect(reopened.parent).toEqual({ sessionId: "s1", entryId: first.id });
    expect((await transcript.fork({ sessionId: "child" }))._unsafeUnwrapErr().code).toBe("conflict");
  });
});

describe("deferUntilAssistant", () => {
  it("writes nothing until the first assistant message, then everything in one append", async () => {
    const store = createMemoryStore();
    const transcript = (await openTranscript({ store, sessionId: "d", deferUntilAssistant: true }))._unsafeUnwrap();
    (await transcript.append({ type: "model_change", provider: "p", modelId: "m" }))._unsafeUnwrap();
    (await transcript.append(user("prompt")))._unsafeUnwrap();
    expect((await store.logs.read(entriesKey("d")))._unsafeUnwrap()).toEqual([]);
    expect(transcript.buildContext()._unsafeUnwrap().messages).toHaveLength(1);
    (await transcript.append(assistant("answer")))._unsafeUnwrap();
    expect((await store.logs.read(entriesKey("d")))._unsafeUnwrap()).toHaveLength(3);
    (await transcript.append(user("next")))._unsafeUnwrap();
    expect((await store.logs.read(entriesKey("d")))._unsafeUnwrap()).toHaveLength(4);
    const reopened = (await openTranscript({ store, sessionId: "d", create: false }))._unsafeUnwrap();
    expect(reopened.buildContext()._unsafeUnwrap()).toEqual(transcript.buildContext()._unsafeUnwrap());
  });
});
