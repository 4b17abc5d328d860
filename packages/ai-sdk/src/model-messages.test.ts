import { unwrapOrThrow } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { openTranscript } from "@keel/transcript";
import { modelMessageSchema, type ModelMessage } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromModelMessages, toModelMessages } from "./model-messages.js";

type Json = Record<string, unknown>;

const json = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
const key = fc.constantFrom("id", "timestamp", "data", "name", "textSignature", "thinkingSignature", "isError", "content", "role", "arguments", "mimeType", "extra", "redacted");
const providerOptions = fc.dictionary(fc.constantFrom("openai", "anthropic", "google"), fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 2 }), { maxKeys: 2 });

/** An object with optional `providerOptions` and sometimes a stray field, its keys in a random order. */
function shaped(required: fc.Arbitrary<Json>): fc.Arbitrary<Json> {
  return fc
    .tuple(required, fc.option(providerOptions, { nil: undefined }), fc.option(fc.tuple(key, json), { freq: 4, nil: undefined }), fc.boolean(), fc.integer())
    .map(([base, options, stray, reorder, seed]) => {
      const object: Json = { ...base };
      if (options !== undefined) object.providerOptions = options;
      if (stray !== undefined && !(stray[0] in object)) object[stray[0]] = stray[1];
      if (!reorder) return object;
      const entries = Object.entries(object);
      const rotated = entries.map((_, index) => entries[(index + Math.abs(seed)) % entries.length] as [string, unknown]);
      return Object.fromEntries(rotated);
    });
}

const base64 = fc.uint8Array({ maxLength: 12 }).map((bytes) => Buffer.from(bytes).toString("base64"));
const url = fc.constantFrom("https://example.com/a.png", "data:image/png;base64,iVBORw0KGgo=", "s3://bucket/key.pdf");
const text = fc.string({ maxLength: 20 });

const textPart = shaped(text.map((value) => ({ type: "text", text: value })));
const imagePart = shaped(
  fc.tuple(fc.oneof(base64, url), fc.option(fc.constantFrom("image/png", "image/jpeg"), { nil: undefined })).map(([image, mediaType]) => ({
    type: "image",
    image,
    ...(mediaType === undefined ? {} : { mediaType }),
  })),
);
const filePart = shaped(
  fc.tuple(fc.oneof(base64, url), fc.option(fc.string({ maxLength: 8 }), { nil: undefined })).map(([data, filename]) => ({
    type: "file",
    data,
    ...(filename === undefined ? {} : { filename }),
    mediaType: "application/pdf",
  })),
);
const reasoningPart = shaped(text.map((value) => ({ type: "reasoning", text: value })));
const toolCallPart = shaped(
  fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), fc.constantFrom("read", "write", "grep"), fc.oneof(fc.dictionary(fc.string({ maxLength: 5 }), json, { maxKeys: 3 }), json), fc.boolean()).map(
    ([id, name, input, executed]) => ({ type: "tool-call", toolCallId: id, toolName: name, input, ...(executed ? { providerExecuted: true } : {}) }),
  ),
);
const output = fc.oneof(
  text.map((value) => ({ type: "text", value })),
  text.map((value) => ({ type: "error-text", value })),
  json.map((value) => ({ type: "json", value })),
  json.map((value) => ({ type: "error-json", value })),
  fc.option(text, { nil: undefined }).map((reason) => (reason === undefined ? { type: "execution-denied" } : { type: "execution-denied", reason })),
  fc.array(fc.oneof(text.map((value) => ({ type: "text", text: value })), base64.map((data) => ({ type: "media", data, mediaType: "image/png" }))), { maxLength: 3 }).map((value) => ({ type: "content", value })),
  shaped(text.map((value) => ({ type: "text", value }))),
);
const toolResultPart = shaped(
  fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), fc.constantFrom("read", "write"), output).map(([id, name, out]) => ({ type: "tool-result", toolCallId: id, toolName: name, output: out })),
);
const approvalResponse = fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), fc.boolean()).map(([id, approved]) => ({ type: "tool-approval-response", approvalId: id, approved }));
const approvalRequest = fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), fc.string({ minLength: 1, maxLength: 4 })).map(([id, call]) => ({ type: "tool-approval-request", approvalId: id, toolCallId: call }));

const systemMessage = shaped(text.map((content) => ({ role: "system", content })));
const userMessage = shaped(fc.oneof(text, fc.array(fc.oneof(textPart, imagePart, filePart), { maxLength: 4 })).map((content) => ({ role: "user", content })));
const assistantMessage = shaped(
  fc.oneof(text, fc.array(fc.oneof(textPart, reasoningPart, toolCallPart, filePart, toolResultPart, approvalRequest), { maxLength: 4 })).map((content) => ({ role: "assistant", content })),
);
const toolMessage = shaped(fc.array(fc.oneof({ weight: 4, arbitrary: toolResultPart }, { weight: 1, arbitrary: approvalResponse }), { maxLength: 4 }).map((content) => ({ role: "tool", content })));
const messages = fc.array(fc.oneof(systemMessage, userMessage, assistantMessage, toolMessage, toolMessage), { maxLength: 8 }) as fc.Arbitrary<ModelMessage[]>;

describe("fromModelMessages / toModelMessages", () => {
  it("round-trips any messages to the same JSON, keys in the same order", () => {
    fc.assert(
      fc.property(messages, (input) => {
        const entries = unwrapOrThrow(fromModelMessages(input));
        const back = unwrapOrThrow(toModelMessages(entries));
        expect(JSON.stringify(back)).toBe(JSON.stringify(input));
      }),
      { numRuns: 400 },
    );
  });

  it("round-trips through a transcript on a store: its entries and, for what the model sees, its context", async () => {
    await fc.assert(
      fc.asyncProperty(messages, async (input) => {
        const store = createMemoryStore();
        const transcript = unwrapOrThrow(await openTranscript({ store, sessionId: "t" }));
        for (const entry of unwrapOrThrow(fromModelMessages(input))) unwrapOrThrow(await transcript.append(entry));
        const reopened = unwrapOrThrow(await openTranscript({ store, sessionId: "t", create: false }));
        expect(JSON.stringify(unwrapOrThrow(toModelMessages(unwrapOrThrow(reopened.path()))))).toBe(JSON.stringify(input));
        const seen = input.filter((message) => message.role !== "system" && !(message.role === "tool" && !message.content.some((part) => part.type === "tool-result")));
        expect(JSON.stringify(unwrapOrThrow(toModelMessages(unwrapOrThrow(reopened.buildContext()))))).toBe(JSON.stringify(seen));
      }),
      { numRuns: 100 },
    );
  });

  it("stores the AI SDK's shapes as pi's blocks where pi has them", () => {
    const input: ModelMessage[] = [
      { role: "user", content: [{ type: "text", text: "read a.ts" }, { type: "image", image: "iVBORw0KGgo=", mediaType: "image/png" }] },
      { role: "assistant", content: [{ type: "reasoning", text: "I should read it" }, { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a.ts" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "json", value: { lines: 3 } } }] },
      { role: "assistant", content: "It has 3 lines." },
    ];
    const stored = unwrapOrThrow(fromModelMessages(input)).map((entry) => (entry as { message: unknown }).message);
    expect(stored).toEqual([
      { role: "user", content: [{ type: "text", text: "read a.ts" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] },
      { role: "assistant", content: [{ type: "thinking", thinking: "I should read it" }, { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } }] },
      { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: '{"lines":3}' }], aiSdk: { output: "json" } },
      { role: "assistant", content: [{ type: "text", text: "It has 3 lines." }], aiSdk: { content: "text" } },
    ]);
  });

  it("keeps two tool messages in a row apart, and binary data as base64", () => {
    const input = [
      { role: "tool", content: [{ type: "tool-result", toolCallId: "a", toolName: "read", output: { type: "text", value: "1" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "b", toolName: "read", output: { type: "text", value: "2" } }] },
      { role: "user", content: [{ type: "file", data: new Uint8Array([1, 2, 3]), mediaType: "application/octet-stream" }] },
    ] as ModelMessage[];
    const back = unwrapOrThrow(toModelMessages(unwrapOrThrow(fromModelMessages(input))));
    expect(back.slice(0, 2)).toEqual(input.slice(0, 2));
    expect(back[2]).toEqual({ role: "user", content: [{ type: "file", data: "AQID", mediaType: "application/octet-stream" }] });
  });

  it("reads pi's own messages as valid AI SDK messages", () => {
    const pi = [
      { role: "user", content: "hi", timestamp: 1 },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hmm", thinkingSignature: "sig" },
          { type: "thinking", thinking: "xx", redacted: true },
          { type: "toolCall", id: "c", name: "read", arguments: { path: "a" } },
        ],
        provider: "anthropic",
        model: "m",
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
        stopReason: "toolUse",
        timestamp: 2,
      },
      { role: "toolResult", toolCallId: "c", toolName: "read", content: [{ type: "text", text: "x" }], isError: false, timestamp: 3 },
      { role: "toolResult", toolCallId: "d", toolName: "read", content: [{ type: "text", text: "boom" }], isError: true, timestamp: 4 },
    ];
    const back = unwrapOrThrow(toModelMessages(pi as never));
    expect(back).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "reasoning", text: "hmm" }, { type: "tool-call", toolCallId: "c", toolName: "read", input: { path: "a" } }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c", toolName: "read", output: { type: "text", value: "x" } },
          { type: "tool-result", toolCallId: "d", toolName: "read", output: { type: "error-text", value: "boom" } },
        ],
      },
    ]);
    for (const message of back) expect(modelMessageSchema.safeParse(message).success).toBe(true);
  });

  it("sends a result the host excluded from the context as the context's placeholder text", () => {
    const stored = unwrapOrThrow(
      fromModelMessages([{ role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "read", output: { type: "json", value: { big: true } } }] }]),
    ).map((entry) => ({ ...(entry as { message: Record<string, unknown> }).message, excludeFromContext: true, content: [{ type: "text", text: "[output excluded from context]" }] }));
    expect(unwrapOrThrow(toModelMessages(stored as never))).toEqual([
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "read", output: { type: "text", value: "[output excluded from context]" } }] },
    ]);
  });

  it("answers bad input with invalid_input", () => {
    expect(fromModelMessages([{ role: "robot", content: "x" }] as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(fromModelMessages([{ role: "user", content: "x", aiSdk: 1 }] as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(fromModelMessages([{ role: "user", content: [{ type: "text", text: 1n }] }] as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(fromModelMessages("nope" as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(toModelMessages([1] as never)._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
