import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFsStore } from "@keel/store-fs";
import { openTranscript } from "@keel/transcript";
import { afterAll, describe, expect, it } from "vitest";
import { startWorker } from "./support/store-fs-child.js";

/**
 * Kill -9 a process that appends transcript entries and moves the leaf, at random moments, again
 * and again on the same directory; after each kill, reopen the transcript and check that every
 * acknowledged entry is there under its parent, that only the one unacknowledged append may have
 * landed, and that the leaf is where the acknowledged writes put it (or where the interrupted
 * write would have: never anywhere else).
 *
 * KEEL_CRASH_ITERATIONS sets the number of kills (default 16; each kill starts a TypeScript child, about 4 s).
 */
const iterations = Number(process.env.KEEL_CRASH_ITERATIONS ?? 16);
const workerFile = "test/support/transcript-crash-worker.ts";
const ACKNOWLEDGED = /^(AA|LA) /;

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

type Pending = { kind: "append"; id: string; parent: string | null } | { kind: "leaf"; id: string } | undefined;

describe("transcript crash safety (kill -9 mid-append)", () => {
  it(`keeps every acknowledged entry and a consistent leaf over ${iterations} kills`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-transcript-crash-"));
    made.push(dir);
    const entries = new Map<string, string | null>();
    let leaf: string | null = null;
    let interruptedAppends = 0;
    let landedUnacknowledged = 0;
    for (let iteration = 0; iteration < iterations; iteration++) {
      const worker = startWorker(workerFile, [dir, String(iteration * 7919 + 1)]);
      const ready = await worker.waitFor(/^ready /);
      const [, readyLeaf, readyCount] = ready.split(" ");
      expect(readyLeaf === "-" ? null : readyLeaf).toBe(leaf);
      expect(Number(readyCount)).toBe(entries.size);
      await worker.waitForCount(ACKNOWLEDGED, 1 + (iteration % 6));
      await new Promise((resolve) => setTimeout(resolve, (iteration * 37) % 15));
      worker.child.kill("SIGKILL");
      const exit = await worker.exited;
      expect(exit.signal, worker.stderr()).toBe("SIGKILL");

      let pending: Pending;
      for (const line of worker.lines) {
        const [kind, id, parent] = line.split(" ");
        if (kind === "AT") pending = { kind: "append", id: id!, parent: parent === "-" ? null : parent! };
        else if (kind === "LT") pending = { kind: "leaf", id: id! };
        else if (kind === "AA") {
          entries.set(id!, parent === "-" ? null : parent!);
          leaf = id!;
          pending = undefined;
        } else if (kind === "LA") {
          leaf = id!;
          pending = undefined;
        }
      }

      const store = createFsStore({ dir });
      const reopened = (await openTranscript({ store, sessionId: "crash", create: false }))._unsafeUnwrap();
      const tree = reopened.tree();
      for (const [id, parent] of entries) {
        expect(tree.get(id), `acknowledged entry ${id} is missing`).toBeDefined();
        expect(tree.get(id)?.parentId).toBe(parent);
      }
      const extra = tree.entries().filter((entry) => !entries.has(entry.id));
      if (pending?.kind === "append") {
        interruptedAppends++;
        expect(extra.map((entry) => entry.id)).toEqual(extra.length === 0 ? [] : [pending.id]);
        if (extra.length === 1) {
          landedUnacknowledged++;
          expect(extra[0]?.parentId).toBe(pending.parent);
          expect(reopened.leafId()).toBe(pending.id);
          entries.set(pending.id, pending.parent);
        } else {
          expect(reopened.leafId()).toBe(leaf);
        }
      } else {
        expect(extra).toEqual([]);
        if (pending?.kind === "leaf") expect([leaf, pending.id]).toContain(reopened.leafId());
        else expect(reopened.leafId()).toBe(leaf);
      }
      leaf = reopened.leafId();
      // The context builds on the reopened tree at its leaf.
      expect(reopened.buildContext().isOk()).toBe(true);
      await store.close();
    }
    // Evidence the kills hit appends in flight, not only idle moments.
    console.log(`transcript crash: ${iterations} kills, ${entries.size} entries, ${interruptedAppends} appends interrupted, ${landedUnacknowledged} of them landed`);
    expect(entries.size).toBeGreaterThan(iterations);
  });
});
