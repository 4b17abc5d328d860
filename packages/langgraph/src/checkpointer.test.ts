import { KeelError } from "@keel/core";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { createMemoryStore } from "@keel/store";
import { JsonPlusSerializer, emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { createKeelCheckpointer } from "./index.js";

const metadata = { source: "loop" as const, step: 0, parents: {} };

function checkpoint(values: Record<string, unknown> = {}): Checkpoint {
  const base = emptyCheckpoint();
  return { ...base, id: uuid6(-1), channel_values: values, channel_versions: Object.fromEntries(Object.keys(values).map((name) => [name, 1])) };
}

async function rejection(promise: Promise<unknown>): Promise<KeelError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(KeelError.is(error)).toBe(true);
  return error as KeelError;
}

describe("createKeelCheckpointer", () => {
  it("rejects options without a store, or with an unknown option, with invalid_input", () => {
    expect(() => createKeelCheckpointer({ store: {} as never })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(() => createKeelCheckpointer({ store: createMemoryStore(), prefx: ["app"] } as never)).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });

  it("rejects a BigInt channel value with invalid_input instead of storing a placeholder string", async () => {
    const store = createMemoryStore();
    const saver = createKeelCheckpointer({ store });
    const error = await rejection(saver.put({ configurable: { thread_id: "t" } }, checkpoint({ count: { total: 1n } }), metadata, { count: 1 }));
    expect(error.code).toBe("invalid_input");
    expect((await store.docs.list([])).unwrapOr({ items: [1] }).items).toEqual([]);
  });

  it("keeps the pending writes of a task id too long, or too odd, for a log record id", async () => {
    const saver = createKeelCheckpointer({ store: createMemoryStore() });
    const config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint(), metadata, {});
    for (const taskId of ["t".repeat(300), "task\u007f"]) {
      await saver.putWrites(config, [["animals", "dog"]], taskId);
      await saver.putWrites(config, [["animals", "dog"]], taskId); // still a no-op when repeated
    }
    expect((await saver.getTuple(config))?.pendingWrites).toHaveLength(2);
  });

  it("keeps a repeated pending write as a no-op and refuses a different one with conflict", async () => {
    const saver = createKeelCheckpointer({ store: createMemoryStore() });
    const config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint(), metadata, {});
    await saver.putWrites(config, [["animals", "dog"]], "task-1");
    await saver.putWrites(config, [["animals", "dog"]], "task-1");
    expect((await saver.getTuple(config))?.pendingWrites).toEqual([["task-1", "animals", "dog"]]);
    const error = await rejection(saver.putWrites(config, [["animals", "cat"]], "task-1"));
    expect(error.code).toBe("conflict");
    expect((await saver.getTuple(config))?.pendingWrites).toEqual([["task-1", "animals", "dog"]]);
  });

  it("replaces special-channel writes (resume, error), as LangGraph expects", async () => {
    const saver = createKeelCheckpointer({ store: createMemoryStore() });
    const config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint(), metadata, {});
    await saver.putWrites(config, [["__resume__", "first"]], "task-1");
    await saver.putWrites(config, [["__resume__", "second"]], "task-1");
    expect((await saver.getTuple(config))?.pendingWrites).toEqual([["task-1", "__resume__", "second"]]);
  });

  it("refuses the put of a saver whose pending writes lost to another writer's, even before the head moves", async () => {
    const store = createMemoryStore();
    const first = createKeelCheckpointer({ store });
    const root = await first.put({ configurable: { thread_id: "t" } }, checkpoint(), metadata, {});
    const second = createKeelCheckpointer({ store });
    expect((await second.getTuple({ configurable: { thread_id: "t" } }))?.config).toEqual(root);
    // Both ran the same task of the same checkpoint with different results (two resumers).
    const kept = first.putWrites(root, [["name", "Ada"]], "task-1");
    const lost = second.putWrites(root, [["name", "Grace"]], "task-1");
    // As LangGraph does, the put is called without awaiting the writes.
    const refused = rejection(second.put(root, checkpoint({ name: "Grace" }), metadata, { name: 1 }));
    await kept;
    expect((await rejection(lost)).code).toBe("conflict");
    expect((await refused).code).toBe("conflict");
    const winner = await first.put(root, checkpoint({ name: "Ada" }), metadata, { name: 1 });
    const latest = await second.getTuple({ configurable: { thread_id: "t" } });
    expect(latest?.config).toEqual(winner);
    expect(latest?.checkpoint.channel_values).toEqual({ name: "Ada" });
  });

  it("refuses a put continuing from a head another writer has moved, and keeps the winner as latest", async () => {
    const store = createMemoryStore();
    const first = createKeelCheckpointer({ store });
    const root = await first.put({ configurable: { thread_id: "t" } }, checkpoint(), metadata, {});
    const second = createKeelCheckpointer({ store });
    // Both read the same head, as two processes resuming the same thread do.
    expect((await first.getTuple({ configurable: { thread_id: "t" } }))?.config).toEqual(root);
    expect((await second.getTuple({ configurable: { thread_id: "t" } }))?.config).toEqual(root);
    const winner = await first.put(root, checkpoint({ step: "a" }), metadata, { step: 1 });
    const error = await rejection(second.put(root, checkpoint({ step: "b" }), metadata, { step: 1 }));
    expect(error.code).toBe("conflict");
    const latest = await second.getTuple({ configurable: { thread_id: "t" } });
    expect(latest?.config).toEqual(winner);
    expect(latest?.checkpoint.channel_values).toEqual({ step: "a" });
    const all = [];
    for await (const tuple of second.list({ configurable: { thread_id: "t" } })) all.push(tuple.config.configurable?.checkpoint_id);
    expect(all).toEqual([winner.configurable?.checkpoint_id, root.configurable?.checkpoint_id]);
  });

  it("forks from an older checkpoint (time travel) without a conflict", async () => {
    const saver = createKeelCheckpointer({ store: createMemoryStore() });
    const root = await saver.put({ configurable: { thread_id: "t" } }, checkpoint(), metadata, {});
    await saver.put(root, checkpoint({ step: "a" }), metadata, { step: 1 });
    const fork = await saver.put(root, checkpoint({ step: "b" }), metadata, { step: 1 });
    expect((await saver.getTuple({ configurable: { thread_id: "t" } }))?.config).toEqual(fork);
  });

  it("shares unchanged large channel values between checkpoints and keeps small ones inline", async () => {
    const store = createMemoryStore();
    const saver = createKeelCheckpointer({ store });
    const messages = Array.from({ length: 10 }, (_, index) => `message ${index} ${"x".repeat(200)}`);
    let config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint({ messages }), metadata, { messages: 1 });
    for (let step = 1; step <= 5; step += 1) {
      config = await saver.put(config, { ...checkpoint({ messages, step }), channel_versions: { messages: 1, step } }, metadata, { step });
    }
    expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ messages, step: 5 });
    // A fresh saver has nothing cached: the values come from the store.
    expect((await createKeelCheckpointer({ store }).getTuple(config))?.checkpoint.channel_values).toEqual({ messages, step: 5 });
    const items = (await store.docs.list(["langgraph"])).unwrapOr({ items: [] }).items;
    expect(items.filter((meta) => meta.key.at(-2) === "blobs")).toHaveLength(1); // "messages" once; each "step" inline
    expect(items.filter((meta) => meta.key.at(-2) === "checkpoints")).toHaveLength(6);
  });

  it("writes a chat step (a growing history changed at every step) as its checkpoint alone, no blob beside it", async () => {
    const store = createMemoryStore();
    const saver = createKeelCheckpointer({ store });
    const history = Array.from({ length: 12 }, (_, index) => ({ role: index % 2 === 0 ? "user" : "assistant", content: `turn ${index} ${"x".repeat(200)}` }));
    let config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint({ messages: history.slice(0, 1) }), metadata, { messages: 1 });
    const batch = vi.spyOn(store.docs, "batch");
    for (let step = 1; step < history.length; step += 1) {
      config = await saver.put(config, { ...checkpoint({ messages: history.slice(0, step + 1) }), channel_versions: { messages: step + 1 } }, metadata, { messages: step + 1 });
    }
    // Each step: one batch of the checkpoint and the head (the compare-and-swap), no blob row.
    expect(batch.mock.calls.map(([writes]) => writes.length)).toEqual(Array.from({ length: history.length - 1 }, () => 2));
    const items = (await store.docs.list(["langgraph"])).unwrapOr({ items: [] }).items;
    expect(items.filter((meta) => meta.key.at(-2) === "blobs")).toHaveLength(0);
    // Read back by a fresh saver (nothing cached); then a step that keeps the
    // history (only "step" changes) makes it a blob, shared from there on.
    expect((await createKeelCheckpointer({ store }).getTuple(config))?.checkpoint.channel_values).toEqual({ messages: history });
    config = await saver.put(config, { ...checkpoint({ messages: history, step: 1 }), channel_versions: { messages: history.length, step: 1 } }, metadata, { step: 1 });
    config = await saver.put(config, { ...checkpoint({ messages: history, step: 2 }), channel_versions: { messages: history.length, step: 2 } }, metadata, { step: 2 });
    const after = (await store.docs.list(["langgraph"])).unwrapOr({ items: [] }).items;
    expect(after.filter((meta) => meta.key.at(-2) === "blobs")).toHaveLength(1);
    expect((await createKeelCheckpointer({ store }).getTuple(config))?.checkpoint.channel_values).toEqual({ messages: history, step: 2 });
  });

  it("carries unchanged primitive channels from the parent, whether the saver has it cached or not", async () => {
    const store = createMemoryStore();
    const warm = createKeelCheckpointer({ store });
    const long = "y".repeat(2_000); // a string too long for the checkpoint's own state: a blob
    const root = await warm.put({ configurable: { thread_id: "t" } }, checkpoint({ step: 1, flag: true, name: "Ada", none: null, long }), metadata, {
      step: 1,
      flag: 1,
      name: 1,
      none: 1,
      long: 1,
    });
    // Only `step` changed: the other channels are the parent's, whatever the checkpoint passed holds.
    const child = await warm.put(root, checkpoint({ step: 2, flag: false, name: "Grace" }), metadata, { step: 2 });
    expect((await warm.getTuple(child))?.checkpoint.channel_values).toEqual({ step: 2, flag: true, name: "Ada", none: null, long });
    // A fresh saver continuing from the stored head: the parent's inline values are read from the store.
    const cold = createKeelCheckpointer({ store });
    const head = await cold.getTuple({ configurable: { thread_id: "t" } });
    const grandchild = await createKeelCheckpointer({ store }).put(child, checkpoint({ step: 3 }), metadata, { step: 3, none: 3 });
    expect(head?.config).toEqual(child);
    expect((await cold.getTuple(grandchild))?.checkpoint.channel_values).toEqual({ step: 3, flag: true, name: "Ada", long });
  });

  it("answers a checkpoint state that does not deserialize to a checkpoint with corrupt", async () => {
    const store = createMemoryStore();
    const config = await createKeelCheckpointer({ store }).put({ configurable: { thread_id: "t" } }, checkpoint(), metadata, {});
    const listed = (await store.docs.list(["langgraph"])).unwrapOr({ items: [] }).items.find((meta) => meta.key.at(-2) === "checkpoints");
    const stored = (await store.docs.get(listed?.key ?? [])).unwrapOr(undefined)?.value as Record<string, unknown>;
    await store.docs.put(listed?.key ?? [], { ...stored, state: { type: "json", encoding: "utf8", data: "[1,2]" } }, { unconditional: true });
    expect((await rejection(createKeelCheckpointer({ store }).getTuple(config))).code).toBe("corrupt");
  });

  it("answers a stored checkpoint that does not parse with corrupt, not a missing checkpoint", async () => {
    const store = createMemoryStore();
    const saver = createKeelCheckpointer({ store });
    const config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint(), metadata, {});
    const listed = (await store.docs.list(["langgraph"])).unwrapOr({ items: [] }).items.find((meta) => meta.key.at(-2) === "checkpoints");
    expect(listed).toBeDefined();
    await store.docs.put(listed?.key ?? [], { not: "a checkpoint" }, { unconditional: true });
    expect((await rejection(saver.getTuple(config))).code).toBe("corrupt");
  });

  it("keeps hostile thread ids inside their own folder", async () => {
    const store = createMemoryStore();
    const saver = createKeelCheckpointer({ store });
    for (const threadId of ["../escape", "__proto__", "a/b", ""].filter(Boolean)) {
      const config = await saver.put({ configurable: { thread_id: threadId } }, checkpoint(), metadata, {});
      expect((await saver.getTuple({ configurable: { thread_id: threadId } }))?.config).toEqual(config);
    }
    const keys = (await store.docs.list(["langgraph"])).unwrapOr({ items: [] }).items.map((meta) => meta.key);
    expect(keys.every((key) => key[0] === "langgraph" && key[1] === "threads")).toBe(true);
  });
  it("reads plain JSON values without the serializer's walk, and still revives what it wrote", async () => {
    const store = createMemoryStore();
    const saver = createKeelCheckpointer({ store });
    const messages = Array.from({ length: 10 }, (_, index) => ({ role: "user", content: `message ${index} ${"x".repeat(200)}` }));
    const plain = await saver.put({ configurable: { thread_id: "plain" } }, checkpoint({ messages, step: 1 }), metadata, { messages: 1, step: 1 });
    await saver.putWrites(plain, [["answer", { text: "ok" }]], "task-1");
    const loads = vi.spyOn(JsonPlusSerializer.prototype, "loadsTyped");
    onTestFinished(() => loads.mockRestore());
    const tuple = await createKeelCheckpointer({ store }).getTuple(plain);
    const read = await saver.getTuple(plain);
    expect(tuple?.checkpoint.channel_values).toEqual({ messages, step: 1 });
    expect(read?.checkpoint.channel_values).toEqual({ messages, step: 1 });
    expect(read?.pendingWrites).toEqual([["task-1", "answer", { text: "ok" }]]);
    expect(loads).not.toHaveBeenCalled();
    // Values the serializer encodes as records (a Set, undefined inside an object) are revived by it.
    const revived = await saver.put({ configurable: { thread_id: "revived" } }, checkpoint({ tags: new Set(["a"]), box: { gone: undefined, x: 1 } }), metadata, { tags: 1, box: 1 });
    const values = (await createKeelCheckpointer({ store }).getTuple(revived))?.checkpoint.channel_values ?? {};
    expect(values.tags).toEqual(new Set(["a"]));
    expect(values.box).toEqual({ x: 1 });
    expect(Object.hasOwn(values.box as object, "gone")).toBe(true);
    expect(loads).toHaveBeenCalled();
  });

  it("loads LangChain messages as their classes without the serializer's walk, pending writes too", async () => {
    const store = createMemoryStore();
    const saver = createKeelCheckpointer({ store });
    const messages = [new HumanMessage("hi"), new AIMessage({ content: "hello", id: "m-2" })];
    const config = await saver.put({ configurable: { thread_id: "lc" } }, checkpoint({ messages }), metadata, { messages: 1 });
    await saver.putWrites(config, [["messages", [new HumanMessage("more")]]], "task-1");
    const loads = vi.spyOn(JsonPlusSerializer.prototype, "loadsTyped");
    onTestFinished(() => loads.mockRestore());
    const tuple = await createKeelCheckpointer({ store }).getTuple(config);
    const read = tuple?.checkpoint.channel_values.messages as BaseMessage[];
    expect(read.map((message) => message.constructor)).toEqual([HumanMessage, AIMessage]);
    expect(read.map((message) => message.content)).toEqual(["hi", "hello"]);
    expect(read[1]!.id).toBe("m-2");
    const written = tuple?.pendingWrites?.[0]?.[2] as BaseMessage[];
    expect(written[0]).toBeInstanceOf(HumanMessage);
    expect(written[0]!.content).toBe("more");
    expect(loads).not.toHaveBeenCalled();
    // Each read hands out its own objects.
    const again = (await createKeelCheckpointer({ store }).getTuple(config))?.checkpoint.channel_values.messages as BaseMessage[];
    expect(again[0]).not.toBe(read[0]);
  });

  it("hands every stored value to a serializer of the caller's own", async () => {
    class CountingSerializer extends JsonPlusSerializer {
      loads = 0;
      override async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
        this.loads += 1;
        return super.loadsTyped(type, data);
      }
    }
    const serde = new CountingSerializer();
    const store = createMemoryStore();
    const config = await createKeelCheckpointer({ store, serde }).put({ configurable: { thread_id: "t" } }, checkpoint({ note: { text: "x".repeat(2_000) } }), metadata, { note: 1 });
    const tuple = await createKeelCheckpointer({ store, serde }).getTuple(config);
    expect(tuple?.checkpoint.channel_values).toEqual({ note: { text: "x".repeat(2_000) } });
    expect(serde.loads).toBe(2); // the checkpoint's own state, then the channel's blob
  });
  it("lists newest first without making tuples a consumer never takes, and reports a damaged one when reached", async () => {
    const store = createMemoryStore();
    const saver = createKeelCheckpointer({ store });
    let config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint({ step: 0 }), metadata, { step: 1 });
    const oldest = config;
    for (let step = 1; step < 8; step += 1) config = await saver.put(config, { ...checkpoint({ step }), channel_versions: { step: step + 1 } }, metadata, { step: step + 1 });
    // Damage the oldest checkpoint's state: listing it is corrupt, listing the newer ones is not.
    const key = (await store.docs.list(["langgraph"])).unwrapOr({ items: [] }).items.map((meta) => meta.key).find((candidate) => candidate.at(-1) === oldest.configurable?.checkpoint_id);
    const stored = (await store.docs.get(key ?? [])).unwrapOr(undefined)?.value as Record<string, unknown>;
    await store.docs.put(key ?? [], { ...stored, state: { type: "json", encoding: "utf8", data: "[1,2]" } }, { unconditional: true });
    const fresh = createKeelCheckpointer({ store });
    const firstTwo: unknown[] = [];
    for await (const tuple of fresh.list({ configurable: { thread_id: "t" } })) {
      firstTwo.push(tuple.checkpoint.channel_values.step);
      if (firstTwo.length === 2) break;
    }
    expect(firstTwo).toEqual([7, 6]);
    const steps: unknown[] = [];
    const listing = (async () => {
      for await (const tuple of fresh.list({ configurable: { thread_id: "t" } })) steps.push(tuple.checkpoint.channel_values.step);
    })();
    expect((await rejection(listing)).code).toBe("corrupt");
    expect(steps).toEqual([7, 6, 5, 4, 3, 2, 1]);
  });
});
