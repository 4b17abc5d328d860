import { describe, expect, it } from "vitest";
import { err, errAsync, ok, okAsync } from "neverthrow";
import { KeelError, keelError, unwrapOrThrow } from "@keel/core";

describe("unwrapOrThrow", () => {
  it("returns the value of an Ok", () => {
    expect(unwrapOrThrow(ok({ turns: 3 }))).toEqual({ turns: 3 });
    expect(unwrapOrThrow(ok(null))).toBeNull();
  });

  it("returns the value of an awaited ResultAsync", async () => {
    expect(unwrapOrThrow(await okAsync("step 3 done"))).toBe("step 3 done");
  });

  it("throws the KeelError of an Err unchanged, code and details included", async () => {
    const error = keelError("conflict", "version 3 expected, 4 found", { details: { expected: 3, found: 4 } });
    let thrown: unknown;
    try {
      unwrapOrThrow(await errAsync(error));
    } catch (caught) {
      thrown = caught;
    }
    expect(thrown).toBe(error);
    expect(KeelError.is(thrown, "conflict")).toBe(true);
    expect((thrown as KeelError).details).toEqual({ expected: 3, found: 4 });
  });

  it("throws a non-Keel error of an Err as it is", () => {
    const error = new RangeError("out of range");
    expect(() => unwrapOrThrow(err(error))).toThrow(error);
  });

  it("answers a ResultAsync that was not awaited with invalid_input and a hint", () => {
    const notAwaited = okAsync(1) as unknown as Parameters<typeof unwrapOrThrow>[0];
    let thrown: unknown;
    try {
      unwrapOrThrow(notAwaited);
    } catch (caught) {
      thrown = caught;
    }
    expect(KeelError.is(thrown, "invalid_input")).toBe(true);
    expect((thrown as KeelError).message).toContain("await it first");
  });

  it("answers something that is not a Result with invalid_input", () => {
    for (const value of [undefined, null, 42, "ok", { value: 1 }]) {
      expect(() => unwrapOrThrow(value as unknown as Parameters<typeof unwrapOrThrow>[0])).toThrow(
        expect.objectContaining({ name: "KeelError", code: "invalid_input" }),
      );
    }
  });
});
