/**
 * @keel/langgraph end to end: a real StateGraph with an interrupt runs to the interrupt in one
 * process and resumes in another (fs store); over PostgreSQL two processes race to resume the
 * same thread and exactly one wins, the other failing with a typed `conflict`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFsStore } from "@keel/store-fs";
import { createPostgresStore } from "@keel/store-postgres";
import { createKeelCheckpointer } from "@keel/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";
import { runTs } from "./support/run-ts.js";

const WORKER = "test/support/langgraph-graph-worker.ts";
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
function tempDir(label: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `keel-langgraph-${label}-`));
  made.push(dir);
  return dir;
}
function lastJson(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
}

describe("@keel/langgraph across processes", () => {
  it("runs a graph to its interrupt in one process and resumes it in another from the fs store", async () => {
    const dir = tempDir("fs");
    const started = await runTs(WORKER, ["fs", dir, "-", "thread-1", "start"]);
    expect(started.code, started.stderr).toBe(0);
    expect(lastJson(started.stdout)).toEqual({ interrupted: ["what is your name?"] });
    const resumed = await runTs(WORKER, ["fs", dir, "-", "thread-1", "resume", "Ada"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const state = lastJson(resumed.stdout).state as { greeting: string; name: string; steps: string[] };
    expect(state.greeting).toBe("Hello, Ada!");
    expect(state.name).toBe("Ada");
    expect(state.steps).toHaveLength(3);
    // "prepare" ran in the first process, "ask" and "greet" in the second.
    expect(new Set(state.steps.map((step) => step.split("@")[1])).size).toBe(2);
    const store = createFsStore({ dir });
    const latest = await createKeelCheckpointer({ store }).getTuple({ configurable: { thread_id: "thread-1" } });
    expect(latest?.checkpoint.channel_values).toMatchObject({ greeting: "Hello, Ada!", name: "Ada" });
    await store.close();
  });
});

describeWithPostgres("@keel/langgraph over PostgreSQL", () => {
  it("lets exactly one of two processes racing to resume a thread win; the other gets conflict", async () => {
    const schema = freshSchemaName();
    try {
      const started = await runTs(WORKER, ["postgres", testPostgresUrl, schema, "race", "start"]);
      expect(started.code, started.stderr).toBe(0);
      const barrier = tempDir("barrier");
      const [first, second] = await Promise.all(
        ["Ada", "Grace"].map((name) => runTs(WORKER, ["postgres", testPostgresUrl, schema, "race", "resume", name, barrier, "2"])),
      );
      const outcomes = [first, second].map((output) => ({ code: output?.code, json: lastJson(output?.stdout ?? ""), stderr: output?.stderr }));
      const winners = outcomes.filter((outcome) => outcome.code === 0);
      const losers = outcomes.filter((outcome) => outcome.code !== 0);
      expect(winners, JSON.stringify(outcomes)).toHaveLength(1);
      expect(losers).toHaveLength(1);
      expect(losers[0]?.code).toBe(3);
      expect(losers[0]?.json.error).toBe("conflict");
      const winnerState = winners[0]?.json.state as { name: string; greeting: string };
      const store = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 1 });
      const latest = await createKeelCheckpointer({ store }).getTuple({ configurable: { thread_id: "race" } });
      expect(latest?.checkpoint.channel_values).toMatchObject({ name: winnerState.name, greeting: `Hello, ${winnerState.name}!` });
      await store.close();
    } finally {
      await dropSchema(schema);
    }
  });
});
