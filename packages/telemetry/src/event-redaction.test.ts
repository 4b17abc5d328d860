import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { digest, utf8Bytes, type JsonValue } from "@keel/core";
import { redactEvent } from "@keel/telemetry";
import { isContentField, isRedactedContent } from "./event-redaction.js";

describe("redactEvent", () => {
  it("replaces content fields at any depth by digest and byte length, keeping numbers", () => {
    const event = {
      type: "host.prompt.sent",
      at: 5,
      prompt: "Fix the bug in src/äpp.ts",
      role: "engineer",
      promptBytes: 27,
      usage: { output: 12, inputUncached: 3 },
      messages: [{ role: "user", content: [{ type: "text", text: "secret" }] }],
      nested: { decisiveOutput: "done", systemPrompt: "be careful", sourceText: "x = 1", note: "kept" },
    };
    const redacted = redactEvent(event) as unknown as Record<string, JsonValue>;
    expect(redacted["prompt"]).toEqual({ redacted: true, digest: digest(event.prompt), bytes: utf8Bytes(event.prompt) });
    expect(redacted["messages"]).toEqual({ redacted: true, digest: digest(event.messages), bytes: expect.any(Number) });
    expect(redacted["usage"]).toEqual({ output: 12, inputUncached: 3 });
    expect(redacted["promptBytes"]).toBe(27);
    expect(redacted["role"]).toBe("engineer");
    expect(redacted["nested"]).toMatchObject({ note: "kept", decisiveOutput: { redacted: true }, systemPrompt: { redacted: true }, sourceText: { redacted: true } });
    expect(JSON.stringify(redacted)).not.toContain("secret");
    expect(JSON.stringify(redacted)).not.toContain("Fix the bug");
    expect(event.prompt).toBe("Fix the bug in src/äpp.ts");
  });

  it("knows content field names by whole name or last camelCase word", () => {
    expect(isContentField("prompt")).toBe(true);
    expect(isContentField("Text")).toBe(true);
    expect(isContentField("rawOutput")).toBe(true);
    expect(isContentField("promptBytes")).toBe(false);
    expect(isContentField("capsulePath")).toBe(false);
    expect(isContentField("context")).toBe(false);
  });

  const contentKey = fc.constantFrom("prompt", "text", "content", "output", "body", "source", "systemPrompt", "rawText");
  const jsonWithContent: fc.Arbitrary<JsonValue> = fc.letrec<{ node: JsonValue }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small" },
      fc.string(),
      fc.integer(),
      fc.constant(null),
      fc.array(tie("node"), { maxLength: 3 }),
      fc.dictionary(fc.oneof(contentKey, fc.constantFrom("role", "path", "n")), tie("node"), { maxKeys: 4 }),
    ),
  })).node;

  it("is idempotent and leaves no string under a content name (property)", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(contentKey, fc.constantFrom("role", "n")), jsonWithContent, { maxKeys: 5 }), (fields) => {
        const event = { ...fields, type: "custom.event", at: 1 };
        const once = redactEvent(event);
        expect(redactEvent(once)).toEqual(once);
        const walk = (node: unknown): void => {
          if (Array.isArray(node)) node.forEach(walk);
          else if (node !== null && typeof node === "object") {
            for (const [key, value] of Object.entries(node)) {
              if (isContentField(key) && value !== null) expect(typeof value === "number" || typeof value === "boolean" || isRedactedContent(value)).toBe(true);
              else walk(value);
            }
          }
        };
        walk(once);
        expect(once.type).toBe("custom.event");
      }),
      { numRuns: 200 },
    );
  });
});
