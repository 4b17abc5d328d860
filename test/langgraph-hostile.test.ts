/**
 * What a hostile or careless caller can hand `@keel/langgraph`'s checkpointer (issue 29 §4): for
 * each entry point, a valid argument with one field at a time swapped for a hostile value (wrong
 * types, prototype keys, NUL, huge strings and numbers, BigInt, cycles, throwing getters, unknown
 * keys), or a whole argument swapped. The saver's methods are LangGraph's Promise API, so a
 * refusal is a promise rejected with a `KeelError` `invalid_input` (the factory throws one). A
 * value of a type its field does not take is refused; a refused call leaves the store exactly as
 * it was; what is accepted reads back (`getTuple`, `list`) without a `corrupt` or a placeholder
 * string in place of a value; a read never writes; nothing pollutes `Object.prototype`.
 *
 * No entry point takes a path: the saver keeps its data in the store it is given, under keys it
 * encodes (the store adapters keep their roots from links), so there are no symlink cases here.
 */
import { isSafeName, KeelError } from "@keel/core";
import { createKeelCheckpointer, type KeelCheckpointSaver } from "@keel/langgraph";
import { createMemoryStore, type KeelStore } from "@keel/store";
import type { RunnableConfig } from "@langchain/core/runnables";
import { uuid6, type Checkpoint, type CheckpointMetadata, type PendingWrite } from "@langchain/langgraph-checkpoint";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { expectRejectedKeel, expectThrowsKeel, hostileValue, settleRejection, storeSnapshot, throwingGetter, withHostileField } from "./support/hostile.js";

const RUNS = { numRuns: 150 };
const THREAD = "thread-1";
const PARENT_ID = uuid6(-1);
const CHILD_ID = uuid6(-1);

afterEach(() => {
  expect((Object.prototype as Record<string, unknown>)["polluted"]).toBeUndefined();
});

/** A memory store holding one checkpoint of {@link THREAD}, and a saver that has read it. */
async function seeded(): Promise<{ store: KeelStore; saver: KeelCheckpointSaver }> {
  const store = createMemoryStore();
  const saver = createKeelCheckpointer({ store });
  const checkpoint: Checkpoint = { v: 4, id: PARENT_ID, ts: "2026-01-01T00:00:00.000Z", channel_values: { step: 0 }, channel_versions: { step: 1 }, versions_seen: {} };
  await saver.put({ configurable: { thread_id: THREAD, checkpoint_ns: "" } }, checkpoint, { source: "input", step: -1, parents: {} }, { step: 1 });
  return { store, saver };
}

const parentConfig = (): RunnableConfig => ({ configurable: { thread_id: THREAD, checkpoint_ns: "", checkpoint_id: PARENT_ID } });

/** The arguments of one valid `put`, continuing from the seeded checkpoint. */
const validPut = {
  config: parentConfig(),
  checkpoint: {
    v: 4,
    id: CHILD_ID,
    ts: "2026-01-01T00:00:01.000Z",
    channel_values: { messages: [{ role: "user", content: "hi" }], step: 1 },
    channel_versions: { messages: 2, step: 2 },
    versions_seen: { agent: { messages: 1, step: 1 } },
  },
  metadata: { source: "loop", step: 0, parents: {} },
  newVersions: { messages: 2, step: 2 },
};

/** The arguments of one valid `putWrites` against the seeded checkpoint. */
const validPutWrites = { config: parentConfig(), writes: [["animals", "dog"], ["count", 1]] as PendingWrite[], taskId: "task-1", taskPath: "" };

// --- what each field takes -------------------------------------------------------------------

/** true: the value must be accepted; false: refused; "either": the value is data (checked: accepted ⇒ readable, refused ⇒ typed, nothing written). */
type Accepts = (value: unknown) => boolean | "either";
const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && [Object.prototype, null].includes(Object.getPrototypeOf(value) as object | null);
const isVersion = (value: unknown) => (typeof value === "number" && Number.isFinite(value)) || typeof value === "string";
/** A plain object whose own values (read without a getter) pass `accepts`; a getter makes it "either" (it throws: refused). */
const mapOf =
  (accepts: (value: unknown) => boolean): Accepts =>
  (value) => {
    if (!isPlain(value) || Object.hasOwn(value, "__proto__")) return false;
    const descriptors = Object.values(Object.getOwnPropertyDescriptors(value));
    if (descriptors.some((descriptor) => descriptor.get !== undefined)) return false;
    return descriptors.every((descriptor) => accepts(descriptor.value));
  };
const optional = (accepts: Accepts): Accepts => (value) => value === undefined || accepts(value);
const nullish = (accepts: Accepts): Accepts => (value) => value === undefined || value === null || accepts(value);
const isString = (value: unknown) => typeof value === "string";
const isCheckpointId = (value: unknown) => typeof value === "string" && (value === "" || isSafeName(value));
const either: Accepts = () => "either";
const never: Accepts = () => false;

/** What each field of a config takes, keyed by its path under the argument (`config.configurable.thread_id`). */
function configFields(argument: string, threadRequired: boolean): Record<string, Accepts> {
  return {
    [argument]: threadRequired ? never : (value) => (typeof value === "object" && value !== null ? "either" : false),
    // Only the saver's four fields are read: any other object is a config without them, or refused.
    [`${argument}.configurable`]: threadRequired ? never : nullish((value) => (typeof value === "object" ? "either" : false)),
    [`${argument}.configurable.thread_id`]: threadRequired ? (value) => typeof value === "string" && value !== "" : nullish(isString),
    [`${argument}.configurable.checkpoint_ns`]: nullish(isString),
    [`${argument}.configurable.checkpoint_id`]: nullish(isCheckpointId),
  };
}

const putFields: Record<string, Accepts> = {
  ...configFields("config", true),
  checkpoint: never,
  "checkpoint.v": Number.isSafeInteger,
  "checkpoint.id": (value) => typeof value === "string" && isSafeName(value),
  "checkpoint.ts": isString,
  "checkpoint.channel_values": (value) => (isPlain(value) && !Object.hasOwn(value, "__proto__") ? "either" : false),
  "checkpoint.channel_values.messages": either,
  "checkpoint.channel_values.step": either,
  "checkpoint.channel_versions": mapOf(isVersion),
  "checkpoint.channel_versions.messages": isVersion,
  "checkpoint.channel_versions.step": isVersion,
  "checkpoint.versions_seen": mapOf(mapOf(isVersion) as (value: unknown) => boolean),
  "checkpoint.versions_seen.agent": mapOf(isVersion),
  "checkpoint.versions_seen.agent.messages": isVersion,
  "checkpoint.versions_seen.agent.step": isVersion,
  metadata: (value) => (isPlain(value) && !Object.hasOwn(value, "__proto__") ? "either" : false),
  "metadata.source": optional(isString),
  "metadata.step": optional(Number.isSafeInteger),
  "metadata.parents": optional(mapOf(isString)),
  newVersions: mapOf(isVersion),
  "newVersions.messages": isVersion,
  "newVersions.step": isVersion,
};

/** What an added key does to each argument: the config and LangGraph's objects are open, but a "__proto__" key is refused, and newVersions holds only versions. */
const addedKeyAccepts = (argument: string, key: string): boolean | "either" =>
  argument === "newVersions" ? false : argument !== "config" && key === "__proto__" ? false : "either";

// --- finding which field a variant changed ---------------------------------------------------

interface Change {
  path: string;
  value: unknown;
  added: boolean;
}

/** The field a {@link withHostileField} variant changed (its copies along the path are followed), or the key it added. */
function changedField(valid: Record<string, unknown>, variant: Record<string, unknown>, path: string): Change | undefined {
  for (const key of Object.keys(variant)) if (!Object.hasOwn(valid, key)) return { path: `${path}.${key}`, value: undefined, added: true };
  for (const key of Object.keys(valid)) {
    const here = `${path}.${key}`;
    const before = valid[key];
    const after = variant[key];
    if (Object.is(before, after)) continue;
    const copied = isPlain(before) && isPlain(after) && Object.keys(before).join("\0") === Object.keys(after).join("\0") && Object.keys(after).length > 0;
    if (!copied) return { path: here, value: after, added: false };
    const inner = changedField(before, after, here);
    if (inner !== undefined) return inner; // else a copy along the path to a field given its own value ("" for "")
  }
  return undefined;
}

/** Variants of an argument list: one argument swapped whole, or one field of one argument (to `depth`). */
function hostileArguments(valid: Record<string, unknown>, depth: number): fc.Arbitrary<{ args: Record<string, unknown>; change: Change }> {
  const names = Object.keys(valid);
  const whole = fc.tuple(fc.constantFrom(...names), hostileValue).map(([name, value]) => ({ args: { ...valid, [name]: value }, change: { path: name, value, added: false } }));
  const fields = names
    .filter((name) => isPlain(valid[name]))
    .map((name) =>
      withHostileField(valid[name] as Record<string, unknown>, depth).map((variant) => ({
        args: { ...valid, [name]: variant },
        change: changedField(valid[name] as Record<string, unknown>, variant, name) ?? UNCHANGED,
      })),
    );
  return fc.oneof(whole, ...fields);
}

/** A variant equal to the valid argument (a field given the value it had). */
const UNCHANGED: Change = { path: "", value: undefined, added: false };

function accepts(fields: Record<string, Accepts>, change: Change): boolean | "either" {
  if (change === UNCHANGED) return true;
  if (change.added) return addedKeyAccepts(change.path.split(".")[0] ?? "", change.path.split(".").at(-1) ?? "");
  return (fields[change.path] ?? never)(change.value);
}

// --- what accepted and refused calls must leave ----------------------------------------------

/** How a refusal may answer: bad input, or a value past the store's size limit (a 4 MB string). */
const REFUSALS: KeelError["code"][] = ["invalid_input", "too_large"];


/** Every checkpoint of every thread reads back, with its pending writes, and no value is a serializer placeholder. */
async function expectReadable(store: KeelStore): Promise<void> {
  const saver = createKeelCheckpointer({ store }); // a fresh saver: nothing cached
  let count = 0;
  for await (const tuple of saver.list({})) {
    count += 1;
    const again = await saver.getTuple(tuple.config);
    expect(again?.checkpoint.id).toBe(tuple.checkpoint.id);
    const text = JSON.stringify([tuple.checkpoint, tuple.metadata, tuple.pendingWrites]);
    expect(text).not.toContain("[unable to serialize");
    expect(text).not.toContain("[Circular]");
  }
  expect(count).toBeGreaterThan(0);
}

/** Calls with a variant: a field that does not take the value refuses it; a refusal writes nothing; what is accepted reads back. */
async function checkCall(fields: Record<string, Accepts>, change: Change, store: KeelStore, call: () => Promise<unknown>): Promise<void> {
  const before = await storeSnapshot(store);
  const wanted = accepts(fields, change);
  const error = wanted === false ? await expectRejectedKeel(call, REFUSALS) : await settleRejection(call, REFUSALS);
  if (wanted === true) expect(error?.code, `${change.path} takes ${typeof change.value}: ${error?.message}`).not.toBe("invalid_input");
  if (error !== undefined) expect(await storeSnapshot(store)).toBe(before);
  else await expectReadable(store);
}

describe("@keel/langgraph given hostile input", () => {
  it("createKeelCheckpointer throws invalid_input for a wrong-typed or unknown option", () => {
    const store = createMemoryStore();
    fc.assert(
      fc.property(withHostileField({ store, prefix: ["app"] }, 1), (options) => {
        const change = changedField({ store, prefix: ["app"] }, options, "options") ?? UNCHANGED;
        if (change === UNCHANGED || (!change.added && change.path === "options.prefix" && change.value === undefined)) {
          expect(createKeelCheckpointer(options as never)).toBeDefined();
          return;
        }
        expectThrowsKeel(() => createKeelCheckpointer(options as never));
      }),
      RUNS,
    );
    for (const options of [null, undefined, 42, "store", { store, serde: {} }, { store, prefix: ["../x"] }, { store, durable: true }]) {
      expectThrowsKeel(() => createKeelCheckpointer(options as never));
    }
  });

  it("put refuses what its arguments do not take, writing nothing; what it accepts reads back", async () => {
    await fc.assert(
      fc.asyncProperty(hostileArguments(validPut, 3), async ({ args, change }) => {
        const { store, saver } = await seeded();
        await checkCall(putFields, change, store, () =>
          saver.put(args.config as RunnableConfig, args.checkpoint as Checkpoint, args.metadata as CheckpointMetadata, args.newVersions as Record<string, number>),
        );
      }),
      RUNS,
    );
  });

  it("putWrites refuses what its arguments do not take, writing nothing; what it accepts reads back", async () => {
    const fields: Record<string, Accepts> = {
      ...configFields("config", true),
      // A write log belongs to a stored checkpoint's id: a config without one is refused.
      "config.configurable.checkpoint_id": (value) => (typeof value === "string" && isSafeName(value) ? "either" : false),
      writes: (value) => (Array.isArray(value) && value.length === 0 ? true : false),
      taskId: (value) => typeof value === "string" && value !== "",
      taskPath: optional(isString),
    };
    const writeVariants = fc.oneof(
      fc.tuple(fc.nat({ max: 1 }), hostileValue).map(([index, write]) => ({ index, write, field: "write" })),
      fc.tuple(fc.nat({ max: 1 }), hostileValue).map(([index, channel]) => ({ index, write: [channel, "dog"], field: "channel" })),
      fc.tuple(fc.nat({ max: 1 }), hostileValue).map(([index, value]) => ({ index, write: ["animals", value], field: "value" })),
    );
    const variants = fc.oneof(
      hostileArguments(validPutWrites, 3),
      writeVariants.map(({ index, write, field }) => {
        const writes = [...validPutWrites.writes] as unknown[];
        writes[index] = write;
        return { args: { ...validPutWrites, writes }, change: { path: `writes.${field}`, value: field === "write" ? write : (write as unknown[])[field === "channel" ? 0 : 1], added: false } };
      }),
    );
    fields["writes.write"] = (value) => (Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && value[0] !== "__proto__" ? "either" : false);
    fields["writes.channel"] = (value) => typeof value === "string" && value !== "__proto__";
    fields["writes.value"] = either;
    await fc.assert(
      fc.asyncProperty(variants, async ({ args, change }) => {
        const { store, saver } = await seeded();
        await checkCall(fields, change, store, () => saver.putWrites(args.config as RunnableConfig, args.writes as PendingWrite[], args.taskId as string, args.taskPath as string));
      }),
      RUNS,
    );
  });

  it("getTuple, list and deleteThread answer a tuple, nothing, or invalid_input, and a read never writes", async () => {
    const readFields: Record<string, Accepts> = {
      ...configFields("config", false),
      options: (value) => (value === undefined ? true : typeof value === "object" && value !== null ? "either" : false),
      "options.limit": optional((value) => Number.isSafeInteger(value) && (value as number) >= 0),
      ...configFields("options.before", false),
      "options.before": optional((value) => (typeof value === "object" && value !== null ? "either" : false)),
      "options.filter": optional((value) => (isPlain(value) && !Object.hasOwn(value, "__proto__") ? "either" : false)),
      "options.filter.source": either, // any value: it matches or not
    };
    const validList = { config: parentConfig(), options: { limit: 2, before: parentConfig(), filter: { source: "input" } } };
    await fc.assert(
      fc.asyncProperty(hostileArguments(validList, 3), async ({ args, change }) => {
        const { store, saver } = await seeded();
        const before = await storeSnapshot(store);
        const wanted = change.added && change.path.startsWith("options") ? "either" : accepts(readFields, change);
        const listing = async () => {
          const tuples = [];
          for await (const tuple of saver.list(args.config as RunnableConfig, args.options as never)) tuples.push(tuple);
          return tuples;
        };
        if (wanted === false) await expectRejectedKeel(listing);
        else if (wanted === true) expect(await settleRejection(listing)).toBeUndefined();
        else await settleRejection(listing);
        if (!change.path.startsWith("options")) {
          if (wanted === false) await expectRejectedKeel(() => saver.getTuple(args.config as RunnableConfig));
          else await settleRejection(() => saver.getTuple(args.config as RunnableConfig));
        }
        expect(await storeSnapshot(store)).toBe(before);
      }),
      RUNS,
    );
    await fc.assert(
      fc.asyncProperty(hostileValue, async (threadId) => {
        const { store, saver } = await seeded();
        const before = await storeSnapshot(store);
        if (typeof threadId === "string" && threadId !== "") await saver.deleteThread(threadId);
        else await expectRejectedKeel(() => saver.deleteThread(threadId as string));
        expect(await storeSnapshot(store)).toBe(before); // no hostile value names the seeded thread
      }),
      RUNS,
    );
  });
});

describe("@keel/langgraph: the cases found from outside", () => {
  const configurable = { thread_id: THREAD, checkpoint_ns: "", checkpoint_id: PARENT_ID };

  it("refuses null configs, checkpoints, metadata, versions and writes with invalid_input, not a TypeError", async () => {
    const { store, saver } = await seeded();
    const before = await storeSnapshot(store);
    const { config, checkpoint, metadata, newVersions } = validPut;
    await expectRejectedKeel(() => saver.put(null as never, checkpoint, metadata as CheckpointMetadata, newVersions));
    await expectRejectedKeel(() => saver.put(config, null as never, metadata as CheckpointMetadata, newVersions));
    await expectRejectedKeel(() => saver.put(config, checkpoint, null as never, newVersions));
    await expectRejectedKeel(() => saver.put(config, checkpoint, metadata as CheckpointMetadata, null as never));
    await expectRejectedKeel(() => saver.putWrites(null as never, [["a", 1]], "task"));
    await expectRejectedKeel(() => saver.putWrites({ configurable }, null as never, "task"));
    await expectRejectedKeel(() => saver.getTuple(null as never));
    await expectRejectedKeel(() => saver.list(null as never).next());
    await expectRejectedKeel(() => saver.list({}, null as never).next());
    expect(await storeSnapshot(store)).toBe(before);
  });

  it("refuses metadata: null and a string newVersions, which would break list later", async () => {
    const { store, saver } = await seeded();
    const before = await storeSnapshot(store);
    const { config, checkpoint, metadata } = validPut;
    await expectRejectedKeel(() => saver.put(config, checkpoint, null as never, { messages: 2 }));
    await expectRejectedKeel(() => saver.put(config, checkpoint, metadata as CheckpointMetadata, "messages" as never));
    await expectRejectedKeel(() => saver.put(config, checkpoint, [] as never, { messages: 2 }));
    await expectRejectedKeel(() => saver.put(config, checkpoint, new Date() as never, { messages: 2 }));
    expect(await storeSnapshot(store)).toBe(before);
    const listed = [];
    for await (const tuple of saver.list({}, { filter: { source: "input" } })) listed.push(tuple);
    expect(listed).toHaveLength(1);
  });

  it("refuses a malformed pending write instead of storing it to be reported corrupt", async () => {
    const { store, saver } = await seeded();
    const before = await storeSnapshot(store);
    for (const writes of [[[1, "x"]], [["x"]], [["x", 1, 2]], [null], ["x"], [{ 0: "x", 1: 1 }], [["__proto__", 1]], [["toString", 1n]]]) {
      await expectRejectedKeel(() => saver.putWrites({ configurable }, writes as never, "task"));
    }
    await expectRejectedKeel(() => saver.putWrites({ configurable }, [["a", 1]], "" as never));
    await expectRejectedKeel(() => saver.putWrites({ configurable }, [["a", 1]], 7 as never));
    await expectRejectedKeel(() => saver.putWrites({ configurable }, [["a", 1]], "task", 7 as never));
    expect(await storeSnapshot(store)).toBe(before);
    // A channel named like an Object.prototype member is an ordinary channel.
    await saver.putWrites({ configurable }, [["toString", 1]], "task");
    expect((await saver.getTuple({ configurable }))?.pendingWrites).toEqual([["task", "toString", 1]]);
  });

  it("refuses a value the serializer cannot represent (BigInt, a cycle, a function, a throwing getter) instead of storing a placeholder", async () => {
    const cycle: Record<string, unknown> = { name: "loop" };
    cycle.self = cycle;
    const { config, checkpoint, metadata, newVersions } = validPut;
    for (const value of [1n, { count: 1n }, [1, 2n], cycle, () => 1, Symbol("s"), throwingGetter(), { toJSON: () => { throw new Error("no"); } }]) {
      const { store, saver } = await seeded();
      const before = await storeSnapshot(store);
      const withValue = { ...checkpoint, channel_values: { ...checkpoint.channel_values, messages: value } };
      await expectRejectedKeel(() => saver.put(config, withValue, metadata as CheckpointMetadata, newVersions));
      // Inside an object a function or a symbol is left out, as JSON leaves it out.
      if (typeof value !== "function" && typeof value !== "symbol") {
        await expectRejectedKeel(() => saver.put(config, checkpoint, { ...metadata, extra: value } as CheckpointMetadata, newVersions));
      }
      await expectRejectedKeel(() => saver.putWrites({ configurable }, [["animals", value]], "task"));
      expect(await storeSnapshot(store)).toBe(before);
    }
    // The placeholder's own text, and a value shared twice (not a cycle), are stored as they are.
    const { store, saver } = await seeded();
    const shared = { text: "[Circular]" };
    const text = "[unable to serialize, circular reference is too complex to analyze]";
    await saver.put(config, { ...checkpoint, channel_values: { messages: [shared, shared], step: text } }, metadata as CheckpointMetadata, newVersions);
    await saver.putWrites({ configurable }, [["animals", text]], "task");
    const tuple = await createKeelCheckpointer({ store }).getTuple({ configurable: { thread_id: THREAD, checkpoint_ns: "" } });
    expect(tuple?.checkpoint.channel_values).toEqual({ messages: [shared, shared], step: text });
    expect((await saver.getTuple({ configurable }))?.pendingWrites).toEqual([["task", "animals", text]]);
  });
});
