import { createEventBus, emptyUsage, type KeelEvent } from "@keel/core";
import { backendError, type Backend, type BackendTurnListener, type BackendTurnResult } from "@keel/backend";
import { createKeel, turnProgress, type RoleTurnProgress } from "@keel/runtime";
import { createMemoryStore } from "@keel/store";
import { ResultAsync, errAsync, okAsync } from "neverthrow";
import { describe, expect, it } from "vitest";

const answer: BackendTurnResult = {
  text: "Decision: done",
  threadId: "t1",
  usage: { ...emptyUsage(), inputUncached: 10, output: 5 },
  durationMs: 3,
  exitCode: null,
  fileAccess: [{ op: "read", path: "src/a.ts", tool: "Read" }],
  toolCalls: 1,
};

/**
 * A backend that reports a tool call, a file access and two pieces of text while it runs, then
 * holds for `holdMs` (ending early when the signal fires, as every adapter does) and answers.
 */
function createObservableBackend(hold: number | ((prompt: string) => number) = 0): Backend & { signals: (AbortSignal | undefined)[] } {
  const signals: (AbortSignal | undefined)[] = [];
  return {
    id: "observable",
    capabilities: { resume: true, skills: "prompt", usage: "full" },
    signals,
    runTurn(request, signal, onEvent?: BackendTurnListener) {
      signals.push(signal);
      const holdMs = typeof hold === "number" ? hold : hold(request.prompt);
      if (signal?.aborted) return errAsync(backendError("aborted", "observable", "aborted before it started"));
      onEvent?.({ type: "tool_call", tool: "Read", at: 1 });
      onEvent?.({ type: "file_access", access: { op: "read", path: "src/a.ts", tool: "Read" }, at: 2 });
      onEvent?.({ type: "text", text: "Decision: ", at: 3 });
      onEvent?.({ type: "text", text: "done", at: 4 });
      const held = new Promise<"done" | "aborted">((resolve) => {
        if (signal?.aborted) return resolve("aborted");
        const timer = setTimeout(() => resolve("done"), holdMs);
        signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve("aborted");
        }, { once: true });
      });
      return ResultAsync.fromSafePromise(held).andThen((outcome) =>
        outcome === "aborted" ? errAsync(backendError("aborted", "observable", "the caller aborted the turn")) : okAsync(structuredClone(answer)),
      );
    },
  };
}

const collect = () => {
  const events = createEventBus();
  const seen: KeelEvent[] = [];
  events.on("*", (event) => seen.push(event));
  return { events, seen };
};

const input = { missionId: "m1", role: "engineer", prompt: "Add the flag.", objective: "Ship --json" };

describe("runRoleTurn options: onProgress", () => {
  it("receives the backend's events, with the turn they belong to, without changing the result", async () => {
    const keel = createKeel({ store: createMemoryStore(), backends: [createObservableBackend()] });
    const seen: RoleTurnProgress[] = [];
    const observed = (await keel.runRoleTurn(input, { onProgress: (event) => seen.push(event) }))._unsafeUnwrap();
    expect(seen.map((event) => event.type)).toEqual(["tool_call", "file_access", "text", "text"]);
    expect(seen[0]).toEqual({ type: "tool_call", tool: "Read", at: 1, missionId: "m1", role: "engineer", backend: "observable" });
    expect(seen.filter((event) => event.type === "text").map((event) => event.type === "text" && event.text).join("")).toBe("Decision: done");

    const other = createKeel({ store: createMemoryStore(), backends: [createObservableBackend()] });
    const plain = (await other.runRoleTurn(input))._unsafeUnwrap();
    expect({ ...observed, warnings: [] }).toEqual({ ...plain, warnings: [] });
    expect(observed.warnings).toEqual(plain.warnings);
    await keel.close();
    await other.close();
  });

  it("a listener that throws never breaks the turn", async () => {
    const keel = createKeel({ store: createMemoryStore(), backends: [createObservableBackend()] });
    const result = await keel.runRoleTurn(input, {
      onProgress: () => {
        throw new Error("observer bug");
      },
    });
    expect(result._unsafeUnwrap().text).toBe("Decision: done");
    await keel.close();
  });

  it("turnProgress makes the events an async iterable that ends with the turn", async () => {
    const keel = createKeel({ store: createMemoryStore(), backends: [createObservableBackend(20)] });
    const progress = turnProgress();
    const turn = keel.runRoleTurn(input, { onProgress: progress.onProgress });
    void turn.then(() => progress.end());
    const types: string[] = [];
    for await (const event of progress) types.push(`${event.role}:${event.type}`);
    expect(types).toEqual(["engineer:tool_call", "engineer:file_access", "engineer:text", "engineer:text"]);
    expect((await turn).isOk()).toBe(true);
    await keel.close();
  });

  it("runRound passes the options to each role's turn", async () => {
    const keel = createKeel({ store: createMemoryStore(), backends: [createObservableBackend()] });
    const roles = new Set<string>();
    const round = await keel.runRound(
      { missionId: "m1", round: 1, planner: { prompt: "Plan." }, engineer: { prompt: "Build." }, reviewer: { prompt: "Review." } },
      { onProgress: (event) => roles.add(event.role) },
    );
    expect(round.isOk()).toBe(true);
    expect([...roles]).toEqual(["planner", "engineer", "reviewer"]);
    await keel.close();
  });
});

describe("runRoleTurn options: signal", () => {
  it("an abort mid-turn answers aborted and settles the reservation with the time used", async () => {
    const { events, seen } = collect();
    const backend = createObservableBackend(60_000);
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], events, turnTimeoutMs: 600_000 });
    const controller = new AbortController();
    const turn = keel.runRoleTurn(input, { signal: controller.signal, onProgress: () => controller.abort() });
    const started = Date.now();
    const result = await turn;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result._unsafeUnwrapErr().code).toBe("aborted");
    expect(backend.signals[0]).toBe(controller.signal);
    const settled = seen.filter((event) => event.type === "budget.settled");
    expect(settled).toHaveLength(1);
    // Settled, not abandoned: the 600 s of reserved time were refunded down to the time used.
    const event = settled[0]!;
    expect(event.type === "budget.settled" && event.details?.outcome).toBe("settled");
    const charged = event.type === "budget.settled" ? event.amounts : undefined;
    expect(charged?.timeMs ?? 0).toBeLessThan(10_000);
    expect(charged?.calls).toBe(1);
    await keel.close();
  });

  it("an already aborted signal runs nothing and reserves nothing", async () => {
    const { events, seen } = collect();
    const backend = createObservableBackend();
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], events });
    const controller = new AbortController();
    controller.abort();
    const result = await keel.runRoleTurn(input, { signal: controller.signal });
    expect(result._unsafeUnwrapErr()).toMatchObject({ code: "aborted", details: { missionId: "m1", role: "engineer", backend: "observable" } });
    expect(backend.signals).toHaveLength(0);
    expect(seen.some((event) => event.type.startsWith("budget."))).toBe(false);
    await keel.close();
  });

  it("a round aborted in its engineer turn stops there", async () => {
    const backend = createObservableBackend((prompt) => (prompt.includes("Build.") ? 60_000 : 0));
    const keel = createKeel({ store: createMemoryStore(), backends: [backend] });
    const controller = new AbortController();
    const round = await keel.runRound(
      { missionId: "m1", round: 1, planner: { prompt: "Plan." }, engineer: { prompt: "Build." }, reviewer: { prompt: "Review." } },
      { signal: controller.signal, onProgress: (event) => (event.role === "engineer" ? controller.abort() : undefined) },
    );
    expect(round._unsafeUnwrapErr().code).toBe("aborted");
    // The planner ran, the engineer was aborted, the reviewer never started.
    expect(backend.signals).toHaveLength(2);
    await keel.close();
  });

  it("rejects bad options with invalid_input", async () => {
    const keel = createKeel({ store: createMemoryStore(), backends: [createObservableBackend()] });
    const badSignal = await keel.runRoleTurn(input, { signal: "stop" as unknown as AbortSignal });
    expect(badSignal._unsafeUnwrapErr().code).toBe("invalid_input");
    const badListener = await keel.runRoleTurn(input, { onProgress: 3 as unknown as () => void });
    expect(badListener._unsafeUnwrapErr().code).toBe("invalid_input");
    const unknownKey = await keel.runRound(
      { missionId: "m1", round: 1, planner: { prompt: "Plan." }, engineer: { prompt: "Build." }, reviewer: { prompt: "Review." } },
      { timeout: 5 } as never,
    );
    expect(unknownKey._unsafeUnwrapErr().code).toBe("invalid_input");
    await keel.close();
  });
});
