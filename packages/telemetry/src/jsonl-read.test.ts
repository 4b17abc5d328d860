import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import type { KeelEvent } from "@keel/core";
import { parseEventsJsonl, readEventsJsonl } from "@keel/telemetry";
import { demoEvents } from "../../../test/support/telemetry-demo-events.js";

const directory = mkdtempSync(join(tmpdir(), "keel-telemetry-read-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const lines = (events: readonly unknown[]) => events.map((event) => `${JSON.stringify(event)}\n`).join("");
const sample = demoEvents({ rounds: 1, policies: ["mission"] });

describe("parseEventsJsonl", () => {
  it("reads every event of a clean file in order", () => {
    expect(parseEventsJsonl(lines(sample))._unsafeUnwrap()).toEqual({ events: sample, torn: null });
    expect(parseEventsJsonl("")._unsafeUnwrap()).toEqual({ events: [], torn: null });
  });

  it("reports a torn last line and keeps the events before it", () => {
    const whole = lines(sample);
    const tail = '{"type":"agent.io.read","at":';
    const torn = `${whole}${tail}`;
    const parsed = parseEventsJsonl(torn)._unsafeUnwrap();
    expect(parsed.events).toEqual(sample);
    expect(parsed.torn).toEqual({ line: sample.length + 1, bytes: Buffer.byteLength(tail) });
  });

  it("accepts a complete last event whose newline is missing", () => {
    const parsed = parseEventsJsonl(lines(sample).slice(0, -1))._unsafeUnwrap();
    expect(parsed).toEqual({ events: sample, torn: null });
  });

  it("fails closed on damage in the middle, with the line number", () => {
    const text = lines(sample).split("\n");
    text[2] = '{"type":"agent.io.read","at":1,"role":';
    const damaged = parseEventsJsonl(text.join("\n"), "events.jsonl")._unsafeUnwrapErr();
    expect(damaged.code).toBe("corrupt");
    expect(damaged.details).toMatchObject({ line: 3, location: "events.jsonl:3" });
  });

  it("fails closed on a line that is JSON but not an event, a blank line, or a bad last event", () => {
    const notEvent = parseEventsJsonl(`${lines(sample)}[1,2]\n${lines(sample)}`)._unsafeUnwrapErr();
    expect(notEvent).toMatchObject({ code: "corrupt", details: { line: sample.length + 1 } });
    const blank = parseEventsJsonl(`${lines(sample)}\n${lines(sample)}`)._unsafeUnwrapErr();
    expect(blank).toMatchObject({ code: "corrupt", details: { line: sample.length + 1 } });
    const badTurn = { ...sample.find((event) => event.type === "role.session.turn"), promptBytes: -1 };
    const lastBad = parseEventsJsonl(`${lines(sample)}${JSON.stringify(badTurn)}`)._unsafeUnwrapErr();
    expect(lastBad).toMatchObject({ code: "corrupt", details: { line: sample.length + 1 } });
  });

  it("validates its arguments", () => {
    expect(parseEventsJsonl(42 as unknown as string)._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  const eventArbitrary: fc.Arbitrary<KeelEvent> = fc.oneof(
    fc.record({
      type: fc.constant("agent.io.read" as const),
      at: fc.nat(),
      role: fc.string({ minLength: 1 }),
      missionId: fc.option(fc.string(), { nil: null }),
      path: fc.string(),
      bytes: fc.nat(),
      skill: fc.constant(null),
    }),
    fc.record({
      type: fc.constant("backend.turn.failed" as const),
      at: fc.nat(),
      backend: fc.string(),
      code: fc.string(),
      resumeFailed: fc.boolean(),
    }),
  );

  it("round-trips any events and cuts any strict prefix into events plus a torn line or an error-free prefix (property)", () => {
    fc.assert(
      fc.property(fc.array(eventArbitrary, { minLength: 1, maxLength: 12 }), fc.nat(), (events, cutSeed) => {
        const text = lines(events);
        expect(parseEventsJsonl(text)._unsafeUnwrap().events).toEqual(events);
        const cut = text.slice(0, cutSeed % text.length);
        const parsed = parseEventsJsonl(cut)._unsafeUnwrap();
        const complete = cut.endsWith("\n") ? cut.split("\n").length - 1 : cut.split("\n").length - 1;
        expect(parsed.events).toEqual(events.slice(0, parsed.events.length));
        expect(parsed.events.length === complete || parsed.events.length === complete + 1).toBe(true);
        if (parsed.torn) expect(parsed.torn.line).toBe(complete + 1);
      }),
      { numRuns: 200 },
    );
  });
});

describe("readEventsJsonl", () => {
  it("reads a real file, naming it in locations", async () => {
    const file = join(directory, "damaged.jsonl");
    writeFileSync(file, `${lines(sample)}not json\n${lines(sample)}`);
    const damaged = (await readEventsJsonl(file))._unsafeUnwrapErr();
    expect(damaged).toMatchObject({ code: "corrupt", details: { location: `${file}:${sample.length + 1}` } });
    const clean = join(directory, "clean.jsonl");
    writeFileSync(clean, lines(sample));
    expect((await readEventsJsonl(clean))._unsafeUnwrap().events).toHaveLength(sample.length);
  });

  it("answers a missing file with not_found, a large one with too_large and bad arguments with invalid_input", async () => {
    expect((await readEventsJsonl(join(directory, "missing.jsonl")))._unsafeUnwrapErr().code).toBe("not_found");
    const file = join(directory, "big.jsonl");
    writeFileSync(file, lines(sample));
    expect((await readEventsJsonl(file, { maxBytes: 10 }))._unsafeUnwrapErr().code).toBe("too_large");
    expect((await readEventsJsonl(""))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await readEventsJsonl(file, { maxBytes: -1 }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await readEventsJsonl(file, { nope: 1 } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
