import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseEntry } from "./entry-parse.js";
import { acceptEntry } from "./internal/entry-accept.js";

/** A value for a field: usually one of the right type, sometimes a wrong one or none. */
const loose = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 6, arbitrary: good }, { weight: 1, arbitrary: fc.constantFrom(undefined, null, 7, -1, "", "s", [], {}, Number.NaN, true) });
const text = fc.string({ maxLength: 8 });
const block = fc.oneof(
  fc.record({ type: fc.constant("text"), text: loose(text) }),
  fc.record({ type: fc.constant("image"), data: loose(text), mimeType: loose(text) }),
  fc.record({ type: fc.constant("thinking"), thinking: loose(text) }),
  fc.record({ type: fc.constant("toolCall"), id: loose(text), name: loose(text), arguments: loose(fc.dictionary(text, fc.jsonValue({ maxDepth: 1 }))) }),
  fc.record({ type: loose(fc.constantFrom("redacted", "audio")) }),
);
const content = loose(fc.oneof(text, fc.array(block, { maxLength: 3 })));
const usage = fc.record({ input: loose(fc.nat()), output: loose(fc.nat()), cacheRead: loose(fc.nat()), cacheWrite: loose(fc.nat()), totalTokens: loose(fc.nat()), cost: loose(fc.constant({ total: 1 })) }, { requiredKeys: [] });
const message = fc.oneof(
  fc.record({ role: fc.constant("user"), content, timestamp: loose(fc.integer()) }, { requiredKeys: ["role"] }),
  fc.record({ role: fc.constant("assistant"), content, provider: loose(text), model: loose(text), usage: loose(usage), stopReason: loose(text), timestamp: loose(fc.integer()) }, { requiredKeys: ["role"] }),
  fc.record({ role: fc.constant("toolResult"), toolCallId: loose(text), toolName: loose(text), content, isError: loose(fc.boolean()), excludeFromContext: loose(fc.boolean()) }, { requiredKeys: ["role"] }),
  fc.record({ role: fc.constant("bashExecution"), command: loose(text), output: loose(text), exitCode: loose(fc.option(fc.integer())), cancelled: loose(fc.boolean()), excludeFromContext: loose(fc.boolean()) }, { requiredKeys: ["role"] }),
  fc.record({ role: fc.constant("custom"), customType: loose(text), content, display: loose(fc.boolean()) }, { requiredKeys: ["role"] }),
  fc.record({ role: loose(fc.constantFrom("hologram", "user")), content }, { requiredKeys: ["role"] }),
);
const id = loose(fc.string({ minLength: 1, maxLength: 6 }));
const fields = fc.oneof(
  fc.record({ type: fc.constant("message"), message: loose(message) }),
  fc.record({ type: fc.constant("model_change"), provider: loose(text), modelId: loose(text) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("thinking_change"), thinkingLevel: loose(text) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("compaction"), summary: loose(text), firstKeptEntryId: id, tokensBefore: loose(fc.nat()), tokensAfter: loose(fc.nat()), source: loose(fc.constantFrom("hook", "summarizer", "import", "other")) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("branch_summary"), fromId: loose(text), summary: loose(text), source: loose(fc.constantFrom("hook", "x")) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("custom"), customType: loose(text), data: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("custom_message"), customType: loose(text), content, display: loose(fc.boolean()) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("label"), targetId: id, label: loose(text) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("session_info"), name: loose(text) }, { requiredKeys: ["type"] }),
  fc.record({ type: loose(fc.constantFrom("future_thing", "")), extra: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] }),
);
const entry = fc.tuple(fields, fc.record({ id, parentId: fc.oneof(fc.constant(null), id), timestamp: loose(fc.constant("2026-01-01T00:00:00.000Z")) }, { requiredKeys: [] })).map(([typed, tree]) => ({ ...typed, ...tree }));

/** Drops keys whose value is `undefined` (JSON cannot carry them; the entries read are JSON). */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe("the fast path of entry validation", () => {
  it("answers only entries the schemas accept, with the schemas' output", () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(entry, (raw) => {
        const value = asJson(raw);
        const fast = acceptEntry(value);
        const parsed = parseEntry(value);
        if (fast !== undefined) {
          accepted++;
          expect(parsed.isOk(), JSON.stringify(parsed.isErr() ? parsed.error.message : "")).toBe(true);
          expect(parsed._unsafeUnwrap()).toEqual(fast);
        } else if (parsed.isErr()) refused++;
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(300);
  });
});
