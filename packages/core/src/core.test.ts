import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  KeelError,
  canonicalJson,
  createEventBus,
  createManualClock,
  digest,
  estimateTokens,
  isSafeName,
  newId,
  parseSafeName,
  toKeelError,
  validate,
  validateFast,
  validateOrThrow,
} from "@keel/core";
import { z } from "zod";

describe("KeelError", () => {
  it("carries a stable code, retryable default and JSON details", () => {
    const error = new KeelError("conflict", "stale", { details: { expected: 1 } });
    expect(error.code).toBe("conflict");
    expect(error.retryable).toBe(true);
    expect(new KeelError("corrupt", "bad").retryable).toBe(false);
    expect(error.toJSON()).toMatchObject({ code: "conflict", details: { expected: 1 } });
  });
  it("is recognised across copies through the Symbol.for marker", () => {
    const foreign = Object.assign(new Error("x"), { code: "timeout" });
    Object.defineProperty(foreign, Symbol.for("keel.error"), { value: true });
    expect(KeelError.is(foreign)).toBe(true);
    expect(KeelError.is(foreign, "timeout")).toBe(true);
    expect(KeelError.is(foreign, "conflict")).toBe(false);
    expect(KeelError.is(new Error("plain"))).toBe(false);
    expect(KeelError.is(null)).toBe(false);
  });
  it("wraps foreign errors with a fallback code", () => {
    const wrapped = toKeelError(new Error("disk"), "io_failed", "writing");
    expect(wrapped.code).toBe("io_failed");
    expect(wrapped.message).toBe("writing: disk");
    const same = new KeelError("timeout", "t");
    expect(toKeelError(same, "io_failed")).toBe(same);
  });
});

describe("canonicalJson and digest", () => {
  it("sorts keys so equal values hash equally", () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe('{"a":[1,{"c":3,"d":2}],"b":1}');
    expect(digest({ a: 1, b: 2 })).toBe(digest({ b: 2, a: 1 }));
    expect(digest({ a: 1 })).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
  it("rejects undefined, NaN, Infinity, cycles and class instances with invalid_input", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [undefined, Number.NaN, Number.POSITIVE_INFINITY, { a: undefined }, cyclic, new Date(), new Map(), 10n, () => 1]) {
      try {
        canonicalJson(bad);
        expect.unreachable(`accepted ${String(bad)}`);
      } catch (error) {
        expect(KeelError.is(error, "invalid_input")).toBe(true);
      }
    }
  });
  it("round-trips any JSON value (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
    );
  });
});

describe("SafeName", () => {
  it("accepts safe names and rejects hostile ones", () => {
    for (const good of ["a", "engineer", "m-1.2_x", "A".repeat(128), newId()]) expect(isSafeName(good)).toBe(true);
    for (const bad of ["", ".", "..", "../x", "a/b", "__proto__", "-x", "a\u0000b", "A".repeat(129), "a b", 5, null]) {
      expect(isSafeName(bad)).toBe(false);
    }
  });
  it("names what was wrong in the error", () => {
    const result = parseSafeName("eng/../x", "role");
    expect(result.isErr() && result.error.code).toBe("invalid_input");
    expect(result.isErr() && result.error.message).toContain('role "eng/../x" is not a safe name');
  });
});

describe("ids, clocks and tokens", () => {
  it("newId makes sortable unique ids", () => {
    const ids = Array.from({ length: 1000 }, () => newId());
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
  });
  it("manual clock moves only when told", () => {
    const clock = createManualClock(1000);
    expect(clock.now()).toBe(1000);
    clock.advance(50);
    expect(clock.now()).toBe(1050);
    clock.set(7);
    expect(clock.now()).toBe(7);
  });
  it("estimateTokens is UTF-8 bytes / 3 rounded up", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcd")).toBe(2);
    expect(estimateTokens("é")).toBe(1);
    expect(estimateTokens("€€")).toBe(2);
  });
});

describe("validate", () => {
  it("refuses with invalid_input, never a throw, an input zod reads again while it words its issue", () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const prototypeTrap = new Proxy(
      {},
      {
        getPrototypeOf: () => {
          throw new Error("hostile getPrototypeOf");
        },
      },
    );
    for (const [schema, input] of [
      [z.string(), revoked.proxy],
      [z.number(), revoked.proxy],
      [z.boolean(), revoked.proxy],
      [z.string(), prototypeTrap],
      [z.object({ name: z.string() }), prototypeTrap],
    ] as const) {
      const result = validate(schema, input, "hostile value");
      expect(result.isErr()).toBe(true);
      expect(result._unsafeUnwrapErr()).toBeInstanceOf(KeelError);
      expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
      expect(result._unsafeUnwrapErr().message).toMatch(/^invalid hostile value/);
    }
  });

  it("answers bad input with invalid_input naming the field", () => {
    const result = validate(z.object({ turns: z.number().int() }), { turns: "x" }, "limits");
    expect(result.isErr()).toBe(true);
    if (result.isErr()) {
      expect(result.error.code).toBe("invalid_input");
      expect(result.error.message).toContain("invalid limits at turns");
    }
  });
  it("answers an input whose reading throws (a getter, a proxy) with invalid_input, never a throw", () => {
    const getter = Object.defineProperty({}, "turns", {
      enumerable: true,
      get() {
        throw new Error("hostile getter");
      },
    });
    const proxy = new Proxy({}, { get: () => { throw new Error("hostile trap"); } });
    for (const input of [getter, proxy]) {
      const result = validate(z.object({ turns: z.number() }), input, "limits");
      expect(result.isErr() && result.error.code).toBe("invalid_input");
    }
    const fast = validateFast(z.object({ turns: z.number() }), getter, "limits", (value) => ((value as { turns: number }).turns > 0 ? { turns: 1 } : undefined));
    expect(fast.isErr() && fast.error.code).toBe("invalid_input");
    expect(() => validateOrThrow(z.object({ turns: z.number() }), getter, "limits")).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });
});

describe("event bus", () => {
  it("delivers typed events to type and '*' listeners and stamps at", () => {
    const clock = createManualClock(42);
    const events = createEventBus({ clock });
    const seen: string[] = [];
    events.on("role.session.warning", (event) => seen.push(`typed:${event.target}:${event.at}`));
    events.on("*", (event) => seen.push(`any:${event.type}`));
    events.emit({ type: "role.session.warning", missionId: "m", role: "r", target: "capsule", operation: "read", code: "corrupt", message: "x" });
    expect(seen).toEqual(["typed:capsule:42", "any:role.session.warning"]);
  });
  it("isolates throwing listeners and unsubscribes once", () => {
    const errors: unknown[] = [];
    const events = createEventBus({ onListenerError: (error) => errors.push(error) });
    const seen: number[] = [];
    events.on("backend.turn.failed", () => {
      throw new Error("boom");
    });
    const off = events.on("backend.turn.failed", () => seen.push(1));
    events.emit({ type: "backend.turn.failed", backend: "b", code: "timeout", resumeFailed: false });
    expect(seen).toEqual([1]);
    expect(errors).toHaveLength(1);
    off();
    off();
    events.emit({ type: "backend.turn.failed", backend: "b", code: "timeout", resumeFailed: false });
    expect(seen).toEqual([1]);
    expect(events.listenerCount("backend.turn.failed")).toBe(1);
  });
});
