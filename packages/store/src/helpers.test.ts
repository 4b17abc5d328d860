import { KeelError } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { ResultAsync, errAsync } from "neverthrow";
import { describe, expect, it } from "vitest";

describe("updateDoc", () => {
  it("creates, updates and skips when the update returns undefined", async () => {
    const store = createMemoryStore();
    const created = await updateDoc<{ n: number }>(store.docs, ["c"], (current) => ({ n: (current?.value.n ?? 0) + 1 }));
    expect(created._unsafeUnwrap()?.version).toBe(1);
    const skipped = await updateDoc<{ n: number }>(store.docs, ["c"], () => undefined);
    expect(skipped._unsafeUnwrap()?.value).toEqual({ n: 1 });
    expect((await store.docs.get(["c"]))._unsafeUnwrap()?.version).toBe(1);
  });

  it("gives up with conflict after the retries are spent", async () => {
    const store = createMemoryStore();
    await store.docs.put(["c"], { n: 0 }, { create: true });
    let calls = 0;
    const result = await updateDoc<{ n: number }>(
      store.docs,
      ["c"],
      (current) => {
        calls++;
        // Another writer sneaks in between every read and write.
        void store.docs.put(["c"], { n: -1 }, { unconditional: true });
        return { n: (current?.value.n ?? 0) + 1 };
      },
      { retries: 2 },
    );
    expect(result.isErr() && result.error.code).toBe("conflict");
    expect(calls).toBe(3);
  });

  it("starts from a known document, re-reading only when it went stale or was deleted", async () => {
    const store = createMemoryStore();
    const first = (await store.docs.put(["c"], { n: 1 }, { create: true }))._unsafeUnwrap();
    const seen: (number | undefined)[] = [];
    const bump = (current: { value: { n: number } } | undefined) => {
      seen.push(current?.value.n);
      return { n: (current?.value.n ?? 0) + 1 };
    };
    expect((await updateDoc<{ n: number }>(store.docs, ["c"], bump, { known: { doc: first } }))._unsafeUnwrap()?.value).toEqual({ n: 2 });
    expect(seen).toEqual([1]);
    // The known document is stale now: the first try conflicts, the second starts from a fresh read.
    expect((await updateDoc<{ n: number }>(store.docs, ["c"], bump, { known: { doc: first } }))._unsafeUnwrap()?.value).toEqual({ n: 3 });
    expect(seen).toEqual([1, 1, 2]);
    await store.docs.delete(["c"], { unconditional: true });
    const reborn = await updateDoc<{ n: number }>(store.docs, ["c"], bump, { known: { doc: first } });
    expect(reborn._unsafeUnwrap()?.value).toEqual({ n: 1 });
    expect(seen).toEqual([1, 1, 2, 1, undefined]);
  });

  it("passes errors of the update through", async () => {
    const store = createMemoryStore();
    const result = await updateDoc(store.docs, ["c"], () => errAsync(new KeelError("budget_exceeded", "no")));
    expect(result.isErr() && result.error.code).toBe("budget_exceeded");
  });
});

describe("createMemoryStore options", () => {
  it("throws invalid_input for bad options", () => {
    expect(() => createMemoryStore({ maxValueBytes: -1 })).toThrowError(KeelError);
    try {
      createMemoryStore({ clock: {} as never });
    } catch (error) {
      expect(KeelError.is(error, "invalid_input")).toBe(true);
    }
  });
});
