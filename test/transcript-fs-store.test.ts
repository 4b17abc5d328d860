/**
 * A transcript on the filesystem store: what it appended, its branches and its moved leaf are
 * there again when a new store opens the same directory. The behaviour on any store is tested
 * beside the code (packages/transcript/src/transcript.test.ts, on the memory store).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createManualClock } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { openTranscript, type Transcript } from "@keel/transcript";
import { afterAll, describe, expect, it } from "vitest";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function fsStore(): { store: KeelStore; dir: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-transcript-"));
  dirs.push(dir);
  return { store: createFsStore({ dir }), dir };
}

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

describe("openTranscript on the filesystem store", () => {
  it("appends a tree, walks paths and children, and keeps a moved leaf across a reopen", async () => {
    const { store, dir } = fsStore();
    const transcript = await open(store);
    const first = (await transcript.append(user("hi")))._unsafeUnwrap();
    const second = (await transcript.append(assistant("hello")))._unsafeUnwrap();
    expect(second.parentId).toBe(first.id);
    expect(transcript.leafId()).toBe(second.id);
    (await transcript.branch(first.id))._unsafeUnwrap();
    const other = (await transcript.append(assistant("other")))._unsafeUnwrap();
    expect(other.parentId).toBe(first.id);
    expect(transcript.children(first.id)._unsafeUnwrap().map((entry) => entry.id)).toEqual([second.id, other.id]);
    expect(transcript.path()._unsafeUnwrap().map((entry) => entry.id)).toEqual([first.id, other.id]);
    (await transcript.setLeaf(second.id))._unsafeUnwrap();
    await store.close();

    const reopened = await open(createFsStore({ dir }));
    expect(reopened.leafId()).toBe(second.id);
    expect(reopened.tree().size).toBe(3);
    const context = reopened.buildContext()._unsafeUnwrap();
    expect(context.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(context.model).toEqual({ provider: "p", modelId: "m" });
  });
});

describe("byte-faithful history (issue 31 §1)", () => {
  it("rebuilds a message from the fs store with the keys, numbers and strings it was appended with", async () => {
    // Keys deliberately out of any schema's or alphabet's order, with tool-call arguments and usage.
    const user = { timestamp: 1, content: "Read b.ts ✓", role: "user" } as const;
    const assistant = {
      usage: { output: 7, cacheWrite: 0, input: 12, cacheRead: 0 },
      content: [{ arguments: { path: "b.ts", limit: 20, all: false }, name: "read", id: "call-1", type: "toolCall" }, { text: "Reading.", type: "text" }],
      role: "assistant",
      model: "fake",
      stopReason: "toolUse",
      timestamp: 2,
    } as const;
    const { store, dir } = fsStore();
    const transcript = (await openTranscript({ store, sessionId: "bytes" }))._unsafeUnwrap();
    (await transcript.append({ message: user, type: "message" }))._unsafeUnwrap();
    (await transcript.append({ type: "message", message: assistant as never }))._unsafeUnwrap();
    const before = JSON.stringify(transcript.buildContext()._unsafeUnwrap().messages);
    expect(before).toBe(JSON.stringify([user, assistant]));
    await store.close();
    const again = createFsStore({ dir });
    const reopened = (await openTranscript({ store: again, sessionId: "bytes" }))._unsafeUnwrap();
    expect(JSON.stringify(reopened.buildContext()._unsafeUnwrap().messages)).toBe(before);
    await again.close();
  });
});
