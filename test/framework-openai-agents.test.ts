/**
 * @keel/openai-agents end to end: a real `Agent` run with `run(agent, input, { session })` against
 * the fake provider, two turns in two processes (the second request carries the first turn's
 * items); several processes adding to and popping from one session lose and duplicate nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createKeelSession } from "@keel/openai-agents";
import { createFsStore } from "@keel/store-fs";
import { createSqliteStore } from "@keel/store-sqlite";
import type { KeelStore } from "@keel/store";
import { startFakeProvider } from "@keel/testkit/provider";
import type { AgentInputItem } from "@openai/agents";
import { afterAll, describe, expect, it } from "vitest";
import { runTs } from "./support/run-ts.js";

const RUN_WORKER = "test/support/openai-agents-run-worker.ts";
const SESSION_WORKER = "test/support/openai-agents-session-worker.ts";
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
function tempDir(label: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `keel-openai-agents-${label}-`));
  made.push(dir);
  return dir;
}
function lastJson(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
}
const contents = (items: AgentInputItem[]): unknown[] => items.map((item) => (item as { content?: unknown }).content);

describe("@keel/openai-agents across processes", () => {
  it("runs two turns of a real Agent in two processes; the second request carries the first turn", async () => {
    const dir = tempDir("run");
    const provider = (await startFakeProvider({ replies: [{ text: "Nice to meet you, Ada." }, { text: "Your name is Ada." }] }))._unsafeUnwrap();
    try {
      const first = await runTs(RUN_WORKER, ["fs", dir, "-", "chat-1", provider.openAiUrl, "My name is Ada."], { env: provider.proxyEnv() });
      expect(first.code, first.stderr).toBe(0);
      expect(lastJson(first.stdout).output).toBe("Nice to meet you, Ada.");
      const second = await runTs(RUN_WORKER, ["fs", dir, "-", "chat-1", provider.openAiUrl, "What is my name?"], { env: provider.proxyEnv() });
      expect(second.code, second.stderr).toBe(0);
      expect(lastJson(second.stdout).output).toBe("Your name is Ada.");
      expect(provider.failures).toEqual([]);
      const calls = provider.modelRequests();
      expect(calls).toHaveLength(2);
      expect(calls[0]?.text).not.toContain("Nice to meet you, Ada.");
      expect(calls[1]?.text).toContain("My name is Ada.");
      expect(calls[1]?.text).toContain("Nice to meet you, Ada.");
      expect(calls[1]?.text).toContain("What is my name?");
      // The restarted process rebuilt turn 1 from the store byte for byte: turn 2's request starts
      // with turn 1's (instructions, the user item with its keys in the SDK's order), so a
      // provider's prompt cache would hit (issue 31 §1).
      const [before, after] = calls.map((call) => call.body as { instructions?: unknown; input: unknown[] });
      expect(after!.instructions).toEqual(before!.instructions);
      expect(after!.input.length).toBeGreaterThan(before!.input.length);
      expect(JSON.stringify(after!.input.slice(0, before!.input.length))).toBe(JSON.stringify(before!.input));
      const store = createFsStore({ dir });
      const items = await createKeelSession({ store, sessionId: "chat-1" }).getItems();
      expect(items).toHaveLength(4);
      expect(items[0]).toMatchObject({ role: "user", content: "My name is Ada." });
      expect(items[2]).toMatchObject({ role: "user", content: "What is my name?" });
      await store.close();
    } finally {
      await provider.close();
    }
  });

  const targets: { kind: string; open: (location: string) => KeelStore; location: (dir: string) => string }[] = [
    { kind: "fs", open: (location) => createFsStore({ dir: location }), location: (dir) => dir },
    { kind: "sqlite", open: (location) => createSqliteStore({ file: location }), location: (dir) => path.join(dir, "keel.db") },
  ];
  for (const target of targets) {
    it(`loses no item when 4 processes add at once, and pops exactly under contention (${target.kind})`, async () => {
      const location = target.location(tempDir(target.kind));
      const adders = await Promise.all(
        ["a", "b", "c", "d"].map((label) => runTs(SESSION_WORKER, [target.kind, location, "-", "shared", "add", "25", label])),
      );
      for (const adder of adders) expect(adder.code, adder.stderr).toBe(0);
      const store = target.open(location);
      const session = createKeelSession({ store, sessionId: "shared" });
      const added = contents(await session.getItems()) as string[];
      expect(added).toHaveLength(100);
      for (const label of ["a", "b", "c", "d"]) {
        // Each writer's items are all there, in the order it added them.
        expect(added.filter((text) => text.startsWith(`${label}-`))).toEqual(Array.from({ length: 25 }, (_, index) => `${label}-${index}`));
      }
      const poppers = await Promise.all([0, 1, 2].map(() => runTs(SESSION_WORKER, [target.kind, location, "-", "shared", "pop", "10"])));
      for (const popper of poppers) expect(popper.code, popper.stderr).toBe(0);
      const popped = poppers.flatMap((popper) => lastJson(popper.stdout).popped as string[]);
      expect(popped).toHaveLength(30);
      expect(new Set(popped).size).toBe(30);
      const remaining = contents(await session.getItems()) as string[];
      expect(remaining).toEqual(added.slice(0, 70));
      expect(new Set([...remaining, ...popped])).toEqual(new Set(added));
      await store.close();
    });
  }
});
