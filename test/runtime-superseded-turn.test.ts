import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeel, openStore } from "@keel/runtime";
import { createScriptedBackend } from "@keel/backends/scripted";
import { describe, expect, it } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";
import { startWorker } from "./support/store-fs-child.js";

/**
 * Two hosts on one store. Host A (a real process) starts the engineer's turn under a 1 s role
 * lease and is stopped (SIGSTOP: a long GC pause, a hung VM) inside it; host B (this process)
 * takes the role over once A's lease has expired and runs its own turn. A is resumed and
 * finishes: its result is Ok (the work happened) but says `superseded: true`, and nothing of it
 * reached the role's capsule.
 */
async function supersede(url: string): Promise<void> {
  const hostA = startWorker("test/support/runtime-superseded-worker.ts", [url]);
  const store = (await openStore(url))._unsafeUnwrap();
  const hostB = createKeel({
    store,
    backends: [createScriptedBackend({ resumable: true, script: () => "Decision: the successor's work" })],
    policy: "rolling",
    // B waits for A's lease to expire (1 s after A's last renewal), generously bounded.
    roleLease: { ttlMs: 1_000, waitMs: 30_000 },
  });
  try {
    await hostA.waitFor(/^working$/);
    hostA.child.kill("SIGSTOP");
    const b = (await hostB.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Take over.", objective: "Ship" }))._unsafeUnwrap();
    expect(b.superseded).toBe(false);
    expect(b.plan.turn).toBe(1);
    expect(b.warnings).toEqual([]);

    hostA.child.kill("SIGCONT");
    hostA.child.stdin!.write("go\n");
    const line = await hostA.waitFor(/^result /);
    expect((await hostA.exited).code, hostA.stderr()).toBe(0);
    const a = JSON.parse(line.slice("result ".length)) as { superseded: boolean; turn: number; text: string; warnings: string[]; events: Record<string, unknown>[] };
    expect(a.text).toBe("Decision: the stalled host's work");
    expect(a.superseded).toBe(true);
    // The same number as B's turn: only the number it planned, which B's stored turn has.
    expect(a.turn).toBe(1);
    expect(a.warnings).toContain("capsule write lease_lost");
    expect(a.warnings).toContain("lease lost lease_lost");
    expect(a.events).toEqual([expect.objectContaining({ type: "role.session.turn", turn: 1, capsuleWritten: false, superseded: true })]);

    const capsule = (await hostB.sessions.readCapsule("m1", "engineer"))._unsafeUnwrap();
    expect(capsule?.counters.totalTurns).toBe(1);
    expect(capsule?.decisiveOutput).toBe("the successor's work");
  } finally {
    hostA.child.kill("SIGCONT");
    hostA.child.kill("SIGKILL");
    await hostB.close();
    await store.close();
  }
}

describe("a superseded turn on the filesystem store", () => {
  it("stays Ok, says superseded: true, and writes nothing, when another host took the role over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "keel-superseded-"));
    try {
      await supersede(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describeWithPostgres("a superseded turn on PostgreSQL", () => {
  it("stays Ok, says superseded: true, and writes nothing, when another host took the role over", async () => {
    const schema = freshSchemaName();
    try {
      await supersede(`${testPostgresUrl}?schema=${schema}`);
    } finally {
      await dropSchema(schema);
    }
  }, 120_000);
});
