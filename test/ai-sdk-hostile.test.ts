/**
 * What a hostile or careless caller can hand `@keel/ai-sdk`'s exports: values of the wrong type
 * and values whose very reading is hostile (a proxy whose reads throw, a throwing getter, cycles,
 * a huge array, a revoked proxy). Each export answers with its documented contract: a `Result`
 * export an `invalid_input` refusal, a throwing one (`createAiSdkBackend`, `callProviderOptions`)
 * a thrown `KeelError`; `runTurn` never throws and writes nothing for a request it refuses.
 */
import { callProviderOptions, createAiSdkBackend, fromModelMessages, responseMessagesOf, toModelMessages } from "@keel/ai-sdk";
import { createMemoryStore } from "@keel/store";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expectRefused, expectThrowsKeel, hostileStructures, hostileValue, settle, storeSnapshot } from "./support/hostile.js";

/** A `LanguageModel` as far as the options check goes (never called: every turn here is refused first). */
const model = {
  specificationVersion: "v3",
  provider: "test.responses",
  modelId: "m",
  supportedUrls: {},
  doGenerate: async () => {
    throw new Error("not called");
  },
  doStream: async () => {
    throw new Error("not called");
  },
};

function isPlainRecordOfRecords(value: unknown): boolean {
  try {
    return typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((item) => typeof item === "object" && item !== null && !Array.isArray(item));
  } catch {
    return false; // a throwing getter
  }
}

describe("@keel/ai-sdk given values whose reading is hostile", () => {
  it("every export answers its typed refusal, never a TypeError, and a refused turn writes nothing", async () => {
    const store = createMemoryStore();
    const backend = createAiSdkBackend({ model: model as never, store });
    const before = await storeSnapshot(store);
    const request = { prompt: "p", cwd: "/tmp", timeoutMs: 1000 };
    const refused: [string, (value: unknown) => unknown][] = [
      ["fromModelMessages(value)", (value) => fromModelMessages(value as never)],
      ["fromModelMessages([value])", (value) => fromModelMessages([value] as never)],
      ["responseMessagesOf(value)", (value) => responseMessagesOf(value as never)],
      ["backend.runTurn(value)", (value) => backend.runTurn(value as never)],
      ["backend.runTurn(request, value)", (value) => backend.runTurn(request, value as never)],
    ];
    // An object item of no known role is passed on as it is (by design: a message pi or a newer writer wrote); one whose reading throws is refused.
    // responseMessagesOf answers the result's own array, whatever it holds: fromModelMessages checks the messages.
    const settled: [string, (value: unknown) => unknown][] = [
      ["toModelMessages(value)", (value) => toModelMessages(value as never)],
      ["toModelMessages([value])", (value) => toModelMessages([value] as never)],
      ["toModelMessages({ messages: value })", (value) => toModelMessages({ messages: value } as never)],
      ["responseMessagesOf({ responseMessages: value })", (value) => responseMessagesOf({ responseMessages: value } as never)],
    ];
    // Provider options are an object of objects: the cyclic object ({ self: cycle }) is one, and is taken.
    const objectOfObjects = new Set(["a cyclic object"]);
    const thrown: [string, (value: unknown) => unknown, Set<string>?][] = [
      ["callProviderOptions(value, undefined)", (value) => callProviderOptions(value as never, undefined)],
      ["callProviderOptions(model, value)", (value) => callProviderOptions(model as never, value as never), objectOfObjects],
      ["createAiSdkBackend(value)", (value) => createAiSdkBackend(value as never)],
      ["createAiSdkBackend({ toolFileAccess: value })", (value) => createAiSdkBackend({ model: model as never, store, toolFileAccess: value as never })],
      ["createAiSdkBackend({ providerOptions: value })", (value) => createAiSdkBackend({ model: model as never, store, providerOptions: value as never }), objectOfObjects],
    ];
    for (const [label, value] of hostileStructures()) {
      for (const [name, call] of refused) {
        await expectRefused(() => call(value)).catch((failure: unknown) => {
          throw new Error(`${name} with ${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
        });
      }
      for (const [name, call] of settled) {
        await settle(() => call(value)).catch((failure: unknown) => {
          throw new Error(`${name} with ${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
        });
      }
      for (const [name, call, takes] of thrown) {
        if (takes?.has(label)) {
          expect(() => call(value), `${name} with ${label}`).not.toThrow();
          continue;
        }
        try {
          expectThrowsKeel(() => call(value));
        } catch (failure) {
          throw new Error(`${name} with ${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
        }
      }
    }
    expect(await storeSnapshot(store)).toBe(before);
  });

  it("toModelMessages refuses a source or an item whose reading throws, typed", async () => {
    const [proxy, arrayProxy, getter, , , , revoked] = hostileStructures().map(([, value]) => value);
    for (const item of [proxy, getter, { type: "message", message: proxy }]) await expectRefused(() => toModelMessages([item] as never));
    for (const source of [proxy, arrayProxy, revoked, { messages: arrayProxy }, { messages: revoked }]) await expectRefused(() => toModelMessages(source as never));
  });

  it("a huge array of non-messages is one refusal naming the first, not an issue per item", () => {
    const refused = fromModelMessages(new Array(2_000_000).fill({}) as never)._unsafeUnwrapErr();
    expect(refused.code).toBe("invalid_input");
    expect(refused.message).toContain("model message 0");
  });

  it("callProviderOptions throws invalid_input for options that are not an object of objects, never reading them as none", () => {
    expect(callProviderOptions(model as never, undefined)).toEqual({ openai: { store: false } });
    expect(callProviderOptions(model as never, { openai: { store: true } })).toEqual({ openai: { store: true } });
    fc.assert(
      fc.property(hostileValue, (value) => {
        if (value === undefined || isPlainRecordOfRecords(value)) return;
        expectThrowsKeel(() => callProviderOptions(model as never, value as never));
      }),
      { numRuns: 100 },
    );
  });

  it("runTurn refuses a signal that is not an AbortSignal, before it opens a transcript", async () => {
    const store = createMemoryStore();
    const backend = createAiSdkBackend({ model: model as never, store });
    const before = await storeSnapshot(store);
    for (const signal of [null, "abort", 1, {}, { aborted: false }, () => undefined]) {
      await expectRefused(() => backend.runTurn({ prompt: "p", cwd: "/tmp", timeoutMs: 1000 }, signal as never));
    }
    expect(await storeSnapshot(store)).toBe(before);
  });
});
