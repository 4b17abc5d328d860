/**
 * What a hostile or careless caller can hand `@keel/transcript`'s entry points (issue 29 §4):
 * for each, a valid argument with one field at a time swapped for a hostile value (wrong types,
 * prototype keys, NUL, huge strings and numbers, throwing getters, unknown keys). Every call
 * answers a result, never a throw; a value of the wrong type is a typed refusal; a refused call
 * leaves the store exactly as it was; nothing pollutes `Object.prototype`.
 *
 * No entry point of this package takes a path: a transcript lives in the store it is given
 * (the store adapter keeps its root from links), and an import reads text the caller read, so
 * which file that was (a link included) is the caller's choice. There are no symlink cases here.
 */
import { createEventBus, isSafeName, KeelError, systemClock } from "@keel/core";
import { createMemoryStore, type KeelStore } from "@keel/store";
import {
  checkForest,
  checkSummary,
  compact,
  compactAgentHistory,
  createTranscriptTree,
  exportPiSession,
  importPiSession,
  importPiSessionToStore,
  isKnownEntry,
  isTurnStart,
  openTranscript,
  parseEntry,
  planCompaction,
  type Summarizer,
  type Transcript,
} from "@keel/transcript";
import { okValue } from "@keel/testkit";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { changedField, expectRefused, hostileStructures, hostileValue, settle, storeSnapshot, withHostileField } from "./support/hostile.js";

const RUNS = { numRuns: 120 };
const TIMESTAMP = "2026-01-01T00:00:00.000Z";

afterEach(() => {
  expect((Object.prototype as Record<string, unknown>)["polluted"]).toBeUndefined();
});

type Accepts = (value: unknown) => boolean | "any";
const optional = (accepts: (value: unknown) => boolean): Accepts => (value) => value === undefined || accepts(value);
const isString = (value: unknown) => typeof value === "string";
const isBoolean = (value: unknown) => typeof value === "boolean";
const isFunction = (value: unknown) => typeof value === "function";
const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isPositive = (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0;
const never = (_value: unknown): boolean => false;
const any: Accepts = () => "any";

/**
 * The one property of every strict option object: swap a field (or add a key), call, and the
 * call answers a result; a value its field does not take, or an unknown key, is `invalid_input`
 * and leaves every store of `stores` as it was.
 */
async function checkOptions(options: {
  valid: Record<string, unknown>;
  fields: Record<string, Accepts>;
  call: (variant: Record<string, unknown>) => unknown;
  stores: () => KeelStore[];
  codes?: KeelError["code"][];
}): Promise<void> {
  await fc.assert(
    fc.asyncProperty(withHostileField(options.valid, 1), async (variant) => {
      const changed = changedField(options.valid, variant);
      const before = await Promise.all(options.stores().map((store) => storeSnapshot(store)));
      const accepts = changed === undefined ? "any" : changed.added ? false : (options.fields[changed.key] ?? never)(variant[changed.key]);
      if (accepts === false) await expectRefused(() => options.call(variant), options.codes ?? ["invalid_input"]);
      const outcome = accepts === false ? { ok: false } : await settle(() => options.call(variant));
      if (!outcome.ok) expect(await Promise.all(options.stores().map((store) => storeSnapshot(store)))).toEqual(before);
    }),
    RUNS,
  );
}

const user = (text: string) => ({ type: "message" as const, message: { role: "user" as const, content: text, timestamp: 1 } });
const assistant = (text: string) => ({ type: "message" as const, message: { role: "assistant" as const, content: [{ type: "text" as const, text }], provider: "p", model: "m", timestamp: 2 } });
const SUMMARY = "## Goal\nG\n## Progress\nP\n## Next Steps\nN\n## Original Request\nR";
const summarizer: Summarizer = async () => ({ text: SUMMARY });

async function conversation(store: KeelStore = createMemoryStore(), sessionId = "s1"): Promise<Transcript> {
  const transcript = await okValue(openTranscript({ store, sessionId }));
  for (let turn = 0; turn < 4; turn++) {
    await okValue(transcript.append(user(`question ${turn} ${"x".repeat(400)}`)));
    await okValue(transcript.append(assistant(`answer ${turn} ${"y".repeat(400)}`)));
  }
  return transcript;
}

describe("openTranscript given hostile options", () => {
  it("refuses every option of the wrong type and every unknown option, writing nothing", async () => {
    const store = createMemoryStore();
    const valid = {
      store,
      sessionId: "s1",
      create: true,
      parent: { sessionId: "p", entryId: null },
      clock: systemClock,
      events: createEventBus(),
      newEntryId: () => "id",
      deferUntilAssistant: false,
    };
    await checkOptions({
      valid,
      fields: {
        store: never,
        sessionId: (value) => isSafeName(value as string),
        create: optional(isBoolean),
        parent: optional(never),
        clock: optional(never),
        events: optional(never),
        newEntryId: optional(isFunction),
        deferUntilAssistant: optional(isBoolean),
      },
      call: (variant) => openTranscript(variant as never),
      stores: () => [store],
    });
  });

  it("refuses a clock that throws or answers no time, writing nothing", async () => {
    const store = createMemoryStore();
    for (const now of [() => Number.NaN, () => 8.64e15 + 1, () => "soon", () => 253_402_300_800_000, () => { throw new Error("no clock"); }]) {
      await expectRefused(() => openTranscript({ store, sessionId: "s1", clock: { now } as never }));
    }
    expect(await storeSnapshot(store)).toBe(await storeSnapshot(createMemoryStore()));
  });
});

describe("a transcript's methods given hostile arguments", () => {
  it("append: an entry of the wrong shape, a bad timestamp, id or type is invalid_input and writes nothing", async () => {
    const store = createMemoryStore();
    const transcript = await conversation(store);
    const valid = { ...user("hello"), timestamp: TIMESTAMP };
    await fc.assert(
      fc.asyncProperty(withHostileField(valid, 3), async (variant) => {
        const changed = changedField(valid, variant);
        const before = await storeSnapshot(store);
        const message = variant["message"];
        // A nested swap keeps the message's keys (any role string is kept as an unknown role); a whole swap does not.
        const nested = typeof message === "object" && message !== null && ["role", "content", "timestamp"].every((key) => Object.hasOwn(message, key));
        const wholeMessage = changed?.key === "message" && !nested;
        if (changed !== undefined && (changed.key === "type" || (changed.key === "timestamp" && variant["timestamp"] !== undefined) || changed.key === "__proto__" || wholeMessage)) {
          await expectRefused(() => transcript.append(variant as never));
          expect(await storeSnapshot(store)).toBe(before);
          return;
        }
        const outcome = await settle(() => transcript.append(variant as never));
        if (!outcome.ok) expect(await storeSnapshot(store)).toBe(before);
      }),
      RUNS,
    );
  });

  it("append: every timestamp that is not an ISO 8601 time is refused (the class, not one example)", async () => {
    const store = createMemoryStore();
    const transcript = await conversation(store);
    const before = await storeSnapshot(store);
    const bad = fc.oneof(
      hostileValue.filter((value) => value !== undefined),
      fc.constantFrom("t", "yesterday", "2026-01-01", "2026-13-01T00:00:00Z", "2026-01-01T25:00:00Z", "2026-01-01T00:00:00", "+010000-01-01T00:00:00.000Z", `${TIMESTAMP}\0`, ` ${TIMESTAMP}`),
      fc.string({ maxLength: 30 }).filter((text) => !/^\d{4}-\d{2}-\d{2}T/.test(text)),
    );
    await fc.assert(
      fc.asyncProperty(bad, async (timestamp) => {
        await expectRefused(() => transcript.append({ ...user("x"), timestamp } as never));
      }),
      RUNS,
    );
    await fc.assert(
      fc.asyncProperty(fc.date({ min: new Date(0), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true }), async (date) => {
        await settle(() => transcript.append({ ...user("x"), timestamp: date.toISOString(), id: "fixed" }));
      }),
      { numRuns: 20 },
    );
    expect(transcript.tree().get("fixed")).toBeDefined();
    expect(await storeSnapshot(store)).not.toBe(before);
  });

  it("append: an entry id with a control character is refused before anything is written, even while deferring", async () => {
    const store = createMemoryStore();
    const transcript = await okValue(openTranscript({ store, sessionId: "d", deferUntilAssistant: true }));
    const before = await storeSnapshot(store);
    for (const id of ["a\0b", "\n", "x\u007f", "", "x".repeat(257)]) await expectRefused(() => transcript.append({ ...user("q"), id }));
    expect(await storeSnapshot(store)).toBe(before);
  });

  it("setLeaf, branch, path, children, buildContext: an argument that is not an entry id is invalid_input, never a throw", async () => {
    const store = createMemoryStore();
    const transcript = await conversation(store);
    await fc.assert(
      fc.asyncProperty(hostileValue, async (value) => {
        const before = await storeSnapshot(store);
        const idLike = typeof value === "string" && value.length > 0 && value.length <= 256 && !/[\u0000-\u001f\u007f]/.test(value);
        const codes: KeelError["code"][] = idLike ? ["not_found"] : ["invalid_input"];
        if (value !== null) await expectRefused(() => transcript.setLeaf(value as never), codes);
        await expectRefused(() => transcript.branch(value as never), value === null ? ["invalid_input"] : codes);
        if (value !== null && value !== undefined) {
          await expectRefused(() => transcript.path(value as never), codes);
          await expectRefused(() => transcript.buildContext(value as never), codes);
          await expectRefused(() => transcript.children(value as never), codes);
        }
        expect(transcript.label(value as never)).toBeUndefined();
        expect(await storeSnapshot(store)).toBe(before);
      }),
      RUNS,
    );
  });

  it("fork: null, an unknown option (deep: true) or a field of the wrong type is invalid_input, and neither store changes", async () => {
    const store = createMemoryStore();
    const other = createMemoryStore();
    const transcript = await conversation(store);
    for (const options of [null, undefined, "f", { sessionId: "f1", deep: true }, { sessionId: "f1", fromId: 3 }, { sessionId: "../f" }]) {
      await expectRefused(() => transcript.fork(options as never));
    }
    await checkOptions({
      valid: { sessionId: "f1", fromId: transcript.leafId(), store: other },
      fields: {
        sessionId: (value) => isSafeName(value as string),
        fromId: (value) => value === undefined || value === null || isString(value),
        store: optional(never),
      },
      call: (variant) => transcript.fork(variant as never),
      stores: () => [store, other],
      codes: ["invalid_input", "not_found"],
    });
  });

  it("navigate: options that are not an object (navigate(id, \"x\")), unknown or of the wrong type are invalid_input; nothing moves", async () => {
    const store = createMemoryStore();
    const transcript = await conversation(store);
    const leaf = transcript.leafId() as string;
    const target = (transcript.path()._unsafeUnwrap()[1] as { id: string }).id;
    for (const options of ["x", 1, null, [], { summarize: summarizer, deep: true }]) {
      await expectRefused(() => transcript.navigate(target, options as never));
      expect(transcript.leafId()).toBe(leaf);
    }
    await fc.assert(
      fc.asyncProperty(hostileValue, async (value) => {
        await expectRefused(() => transcript.navigate(value as never), typeof value === "string" && value.length > 0 && value.length <= 256 && !/[\u0000-\u001f\u007f]/.test(value) ? ["not_found"] : ["invalid_input"]);
      }),
      RUNS,
    );
    await checkOptions({
      valid: { summarize: summarizer, customInstructions: "be brief", hooks: {}, estimator: (text: string) => text.length, maxInputTokens: 1000, maxSummaryTokens: 100, cwd: "/w" },
      fields: {
        summarize: optional(isFunction),
        customInstructions: optional(isString),
        hooks: any,
        estimator: optional(isFunction),
        maxInputTokens: optional(isPositive),
        maxSummaryTokens: optional(isPositive),
        cwd: optional(isString),
      },
      call: (variant) => transcript.navigate(leaf, variant as never),
      stores: () => [store],
    });
  });

  it("compact: null, an unknown option or one of the wrong type is invalid_input, and nothing is appended", async () => {
    const store = createMemoryStore();
    const transcript = await conversation(store);
    for (const options of [null, undefined, "x", { summarizer, keepRecentTokens: 10, reserveTokens: 100, deep: true }]) {
      await expectRefused(() => transcript.compact(options as never));
    }
    await checkOptions({
      valid: { summarizer, keepRecentTokens: 10, reserveTokens: 100, estimator: (text: string) => text.length, cwd: "/w", customInstructions: "c", hooks: {} },
      fields: {
        summarizer: isFunction,
        keepRecentTokens: isCount,
        reserveTokens: isCount,
        estimator: optional(isFunction),
        cwd: optional(isString),
        customInstructions: optional(isString),
        hooks: any,
      },
      call: (variant) => transcript.compact(variant as never),
      stores: () => [store],
    });
  });

  it("compact and navigate: an estimator that throws or answers no count is invalid_input, nothing appended", async () => {
    const store = createMemoryStore();
    const transcript = await conversation(store);
    const before = await storeSnapshot(store);
    const first = (transcript.path()._unsafeUnwrap()[0] as { id: string }).id;
    for (const estimator of [() => Number.NaN, () => -1, () => "3", () => { throw new Error("no"); }]) {
      await expectRefused(() => transcript.compact({ summarizer, keepRecentTokens: 10, reserveTokens: 100, estimator: estimator as never }));
      await expectRefused(() => transcript.navigate(first, { summarize: summarizer, estimator: estimator as never }));
    }
    expect(await storeSnapshot(store)).toBe(before);
  });
});

describe("importPiSession given hostile text, options and headers", () => {
  const header = { type: "session", version: 3, id: "abc", timestamp: TIMESTAMP, cwd: "/x", parentSession: "/p.jsonl" };
  const entry = { type: "message", id: "e1", parentId: null, timestamp: TIMESTAMP, message: { role: "user", content: "hi", timestamp: 1 } };
  const file = (head: unknown, ...entries: unknown[]) => `${[head, ...entries].map((line) => JSON.stringify(line)).join("\n")}\n`;

  it("refuses text that is not a string and options that are not { strict?: boolean }", async () => {
    await fc.assert(
      fc.asyncProperty(hostileValue, async (value) => {
        if (typeof value === "string") await expectRefused(() => importPiSession(value), ["corrupt"]);
        else await expectRefused(() => importPiSession(value as never));
      }),
      RUNS,
    );
    await checkOptions({ valid: { strict: true }, fields: { strict: optional(isBoolean) }, call: (variant) => importPiSession(file(header, entry), variant as never), stores: () => [] });
    for (const options of [null, "strict", 1]) await expectRefused(() => importPiSession(file(header, entry), options as never));
  });

  it("refuses a header field of the wrong type as corrupt (line 1), never reading it as \"\" or dropping it", async () => {
    const fields: Record<string, (value: unknown) => boolean> = {
      type: (value) => value === "session",
      version: (value) => value === undefined || value === 1 || value === 2 || value === 3,
      id: (value) => typeof value === "string" && value.length > 0 && value.length <= 256,
      timestamp: (value) => typeof value === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value)),
      cwd: isString,
      parentSession: (value) => value === undefined || isString(value),
    };
    await fc.assert(
      fc.asyncProperty(withHostileField(header, 1), async (variant) => {
        let text: string;
        try {
          text = file(variant, entry);
        } catch {
          return; // a BigInt or a cycle: not a JSON line a file can hold
        }
        const parsed = JSON.parse(text.split("\n")[0] as string) as Record<string, unknown>;
        const changed = changedField(header, parsed);
        const accepts = changed === undefined || changed.added ? true : (fields[changed.key] as (value: unknown) => boolean)(parsed[changed.key]);
        if (!accepts) {
          const error = await expectRefused(() => importPiSession(text), ["corrupt", "unsupported"]);
          expect(error.details["line"]).toBe(1);
          return;
        }
        const imported = await settle(() => importPiSession(text));
        expect(imported.ok).toBe(true);
      }),
      RUNS,
    );
  });

  it("drops (or with strict refuses) an entry whose timestamp is not an ISO 8601 time, naming its line", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileValue, fc.constantFrom("t", "2026-01-01", "1700000000000")), async (timestamp) => {
        let text: string;
        try {
          text = file(header, { ...entry, id: "e0" }, { ...entry, id: "bad", parentId: "e0", timestamp });
        } catch {
          return;
        }
        const imported = (await settle(() => importPiSession(text))) as { ok: true; value: { entries: { id: string }[]; diagnostics: { line: number; code: string }[] } };
        expect(imported.ok).toBe(true);
        expect(imported.value.entries.map((kept) => kept.id)).toEqual(["e0"]);
        expect(imported.value.diagnostics).toContainEqual(expect.objectContaining({ line: 3, code: "invalid_entry" }));
        await expectRefused(() => importPiSession(text, { strict: true }), ["corrupt"]);
      }),
      RUNS,
    );
  });

  it("importPiSessionToStore refuses every option of the wrong type and unknown options, writing nothing", async () => {
    const store = createMemoryStore();
    await checkOptions({
      valid: { store, text: file(header, entry), sessionId: "imported", strict: false, clock: systemClock, events: createEventBus() },
      fields: {
        store: never,
        text: (value) => (typeof value === "string" ? "any" : false),
        sessionId: optional((value) => isSafeName(value as string)),
        strict: optional(isBoolean),
        clock: optional(never),
        events: optional(never),
      },
      call: (variant) => importPiSessionToStore(variant as never),
      stores: () => [store],
    });
  });

  it("importPiSessionToStore writes nothing for a file whose session id is not a safe name, or whose entries the store would refuse", async () => {
    const store = createMemoryStore();
    const empty = await storeSnapshot(store);
    await expectRefused(() => importPiSessionToStore({ store, text: file({ ...header, id: "../x" }, entry) }));
    const imported = await okValue(importPiSessionToStore({ store, text: file(header, entry, { ...entry, id: "a\0b", parentId: "e1" }), sessionId: "s" }));
    expect(imported.diagnostics).toContainEqual(expect.objectContaining({ line: 3, code: "invalid_entry" }));
    expect(imported.transcript.tree().size).toBe(1);
    await expectRefused(() => importPiSessionToStore({ store, text: file(header, entry, { ...entry, id: "a\0b", parentId: "e1" }), sessionId: "t", strict: true }), ["corrupt"]);
    expect((await okValue(store.docs.list(["transcripts", "t"]))).items).toEqual([]);
    expect(empty).not.toBe(await storeSnapshot(store));
  });

  it("an import or a fork with an entry the store would refuse as too large writes nothing (no empty session left behind)", async () => {
    const small = createMemoryStore({ maxValueBytes: 2048 });
    const empty = await storeSnapshot(small);
    const big = { ...entry, id: "big", parentId: "e1", message: { role: "user", content: "x".repeat(4096), timestamp: 2 } };
    await expectRefused(() => importPiSessionToStore({ store: small, text: file(header, entry, big), sessionId: "s" }), ["too_large"]);
    expect(await storeSnapshot(small)).toBe(empty);
    const source = await conversation(createMemoryStore());
    await okValue(source.append(user("y".repeat(4096))));
    await expectRefused(() => source.fork({ sessionId: "f", store: small }), ["too_large"]);
    expect(await storeSnapshot(small)).toBe(empty);
  });

  it("exportPiSession refuses options of the wrong type and unknown options", async () => {
    const transcript = await conversation();
    await checkOptions({
      valid: { leafId: transcript.leafId(), cwd: "/w", sessionId: "abc", parentSession: "/p.jsonl", timestamp: TIMESTAMP },
      fields: {
        leafId: (value) => (value === undefined ? true : typeof value === "string" ? "any" : false),
        cwd: optional(isString),
        sessionId: optional((value) => isString(value) && (value as string).length > 0 && (value as string).length <= 256),
        parentSession: optional(isString),
        timestamp: optional(never),
      },
      call: (variant) => exportPiSession(transcript, variant as never),
      stores: () => [],
      codes: ["invalid_input", "not_found"],
    });
    for (const source of [null, {}, "t", { tree: 1, leafId: () => null }]) await expectRefused(() => exportPiSession(source as never));
  });
});

describe("the pure entry points given hostile arguments", () => {
  it("never throw: planCompaction, compact, compactAgentHistory, createTranscriptTree, checkForest, parseEntry", async () => {
    const transcript = await conversation();
    const path = transcript.path()._unsafeUnwrap();
    const plan = (planCompaction(path, { keepRecentTokens: 10, reserveTokens: 100 })._unsafeUnwrap())!;
    await fc.assert(
      fc.asyncProperty(hostileValue, hostileValue, async (first, second) => {
        await settle(() => planCompaction(first as never, second as never));
        await settle(() => planCompaction(path, first as never));
        await settle(() => planCompaction([first] as never, { keepRecentTokens: 1, reserveTokens: 1 }));
        await settle(() => compact(first as never, summarizer));
        await settle(() => compact(plan, summarizer, first as never));
        await settle(() => compactAgentHistory(first as never, second as never));
        await settle(() => compactAgentHistory([{ text: "a" }], first as never));
        await settle(() => createTranscriptTree(first as never));
        await settle(() => createTranscriptTree([first] as never));
        await settle(() => checkForest(first as never));
        await settle(() => checkForest([first, second] as never));
        await settle(() => parseEntry(first));
        await settle(() => checkSummary(first as never, second));
        await expectRefused(() => checkSummary(first as never, SUMMARY));
        expect(isKnownEntry(first as never)).toBe(false);
        expect(isTurnStart(first as never)).toBe(false);
      }),
      RUNS,
    );
    await checkOptions({
      valid: { keepRecentTokens: 10, reserveTokens: 100, estimator: (text: string) => text.length, cwd: "/w" },
      fields: { keepRecentTokens: isCount, reserveTokens: isCount, estimator: optional(isFunction), cwd: optional(isString) },
      call: (variant) => planCompaction(path, variant as never),
      stores: () => [],
    });
    expect(KeelError.is(checkForest([null] as never)._unsafeUnwrapErr())).toBe(true);
  });
});

describe("every export given a value whose reading is hostile (a proxy, a throwing getter, a cycle, a huge array)", () => {
  it("answers invalid_input (false for the predicates), never a TypeError, and writes nothing", async () => {
    const store = createMemoryStore();
    const transcript = await conversation(store);
    const path = transcript.path()._unsafeUnwrap();
    const plan = planCompaction(path, { keepRecentTokens: 10, reserveTokens: 100 })._unsafeUnwrap()!;
    const entry = path[0] as Record<string, unknown>;
    const before = await storeSnapshot(store);
    const calls: [string, (value: unknown) => unknown][] = [
      ["checkForest(value)", (value) => checkForest(value as never)],
      ["checkForest([value])", (value) => checkForest([value] as never)],
      ["createTranscriptTree(value)", (value) => createTranscriptTree(value as never)],
      ["createTranscriptTree([entry, value])", (value) => createTranscriptTree([entry, value] as never)],
      ["parseEntry(value)", (value) => parseEntry(value)],
      ["parseEntry(entry, value)", (value) => parseEntry(entry, value as never)],
      ["planCompaction(value, options)", (value) => planCompaction(value as never, { keepRecentTokens: 10, reserveTokens: 100 })],
      ["planCompaction(path, value)", (value) => planCompaction(path, value as never)],
      ["compact(value, summarizer)", (value) => compact(value as never, summarizer)],
      ["compact(plan, summarizer, value)", (value) => compact(plan, summarizer, value as never)],
      ["compactAgentHistory(value)", (value) => compactAgentHistory(value as never)],
      ["compactAgentHistory(items, value)", (value) => compactAgentHistory([{ text: "a" }], value as never)],
      ["checkSummary(value, summary)", (value) => checkSummary(value as never, SUMMARY)],
      ["openTranscript(value)", (value) => openTranscript(value as never)],
      ["importPiSession(value)", (value) => importPiSession(value as never)],
      ["importPiSessionToStore(value)", (value) => importPiSessionToStore(value as never)],
      ["exportPiSession(value)", (value) => exportPiSession(value as never)],
      ["exportPiSession(transcript, value)", (value) => exportPiSession(transcript, value as never)],
      ["transcript.append(value)", (value) => transcript.append(value as never)],
      ["transcript.fork(value)", (value) => transcript.fork(value as never)],
      ["transcript.compact(value)", (value) => transcript.compact(value as never)],
    ];
    for (const [label, value] of hostileStructures()) {
      for (const [name, call] of calls) {
        const error = await expectRefused(() => call(value)).catch((failure: unknown) => {
          throw new Error(`${name} with ${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
        });
        expect(error.code, `${name} with ${label}`).toBe("invalid_input");
      }
      expect(isKnownEntry(value as never), label).toBe(false);
      expect(isTurnStart(value as never), label).toBe(false);
    }
    expect(await storeSnapshot(store)).toBe(before);
  });

  it("checkForest and createTranscriptTree read each entry once: what they index is what they checked", async () => {
    const path = (await conversation()).path()._unsafeUnwrap();
    let reads = 0;
    const flaky = new Proxy(path, {
      get(target, key) {
        if (key === "0") reads++;
        // The first read is a valid entry, any later one a hostile value.
        return key === "0" && reads > 1 ? { type: 1 } : Reflect.get(target, key);
      },
    });
    const tree = createTranscriptTree(flaky as never)._unsafeUnwrap();
    expect(tree.size).toBe(path.length);
    expect(tree.entries()[0]).toEqual(path[0]);
    expect(reads).toBe(1);
  });
});
