// createClaudeSessionStore (@keel/backends/claude-agent-sdk): the Claude Agent SDK's SessionStore
// contract kept in Keel stores — memory, SQLite (two stores over one file: two hosts) and
// PostgreSQL (two stores over one schema) — and the README's example of it, run as written. The
// real SDK resuming from it on another host is proven in test/real-clis/src/claude-agent-sdk.spec.ts.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createClaudeSessionStore, type ClaudeSessionEntry } from "@keel/backends/claude-agent-sdk";
import { KeelError } from "@keel/core";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { adminQuery, describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";
import { readmePrinted, repoRoot, runTs } from "./support/run-ts.js";

const SESSION = "b56fa0f0-ae22-478d-91e9-85a6593a198b";
/** Keys deliberately out of alphabetical order: what the SDK appended must come back deep-equal. */
const entries: ClaudeSessionEntry[] = [
  { type: "queue-operation", operation: "enqueue", timestamp: "2026-12-05T10:00:00.000Z", sessionId: SESSION },
  { uuid: "u-1", type: "user", message: { role: "user", content: "Read README.md" }, parentUuid: null, timestamp: "2026-12-05T10:00:00.100Z" },
  { type: "assistant", uuid: "u-2", parentUuid: "u-1", message: { content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/w/README.md" } }], role: "assistant" } },
];

/** The session store contract on two stores that share their data (two hosts), or one. */
function contract(name: string, open: () => Promise<{ a: KeelStore; b: KeelStore; close(): Promise<void> }>) {
  describe(`createClaudeSessionStore on ${name}`, () => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });

    it("loads on host B what host A appended, in order; a replayed entry with a uuid is kept once", async () => {
      const stores = await open();
      close = stores.close;
      const hostA = createClaudeSessionStore({ store: stores.a });
      const hostB = createClaudeSessionStore({ store: stores.b });
      const key = { projectKey: "-work-harbor-project", sessionId: SESSION };
      expect(await hostB.load(key)).toBeNull();
      await hostA.append(key, entries.slice(0, 2));
      // The SDK retries a batch and importSessionToStore replays: the uuid entries are not doubled.
      await hostA.append(key, [entries[1]!, entries[2]!, entries[2]!]);
      const loaded = await hostB.load({ ...key, projectKey: "-other-host-cwd" });
      expect(loaded).toEqual(entries);
      expect(await hostB.listSessions(key.projectKey)).toEqual([{ sessionId: SESSION, mtime: expect.any(Number) }]);
      expect(await hostB.listSessions("-no-such-project")).toEqual([]);
    });

    it("keeps subagent transcripts apart, lists them, and deletes a session with them", async () => {
      const stores = await open();
      close = stores.close;
      const sessions = createClaudeSessionStore({ store: stores.a, pageSize: 2 });
      const main = { projectKey: "/p", sessionId: SESSION };
      const sub = { ...main, subpath: "subagents/agent-a1b2" };
      await sessions.append(main, entries);
      await sessions.append(sub, [{ type: "user", uuid: "s-1", message: { role: "user", content: "sub" } }]);
      expect(await sessions.load(main)).toEqual(entries);
      expect(await sessions.load(sub)).toEqual([{ type: "user", uuid: "s-1", message: { role: "user", content: "sub" } }]);
      expect(await sessions.listSubkeys(main)).toEqual(["subagents/agent-a1b2"]);
      await sessions.delete(main);
      expect(await sessions.load(main)).toBeNull();
      expect(await sessions.load(sub)).toBeNull();
      expect(await sessions.listSessions("/p")).toEqual([]);
    });
  });
}

contract("the memory store", async () => {
  const store = createMemoryStore();
  return { a: store, b: store, close: () => store.close() };
});

contract("SQLite, two stores over one file", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "keel-claude-sessions-"));
  const file = path.join(dir, "keel.db");
  const a = createSqliteStore({ file });
  const b = createSqliteStore({ file });
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describeWithPostgres("createClaudeSessionStore on PostgreSQL", () => {
  contract("PostgreSQL, two stores over one schema", async () => {
    const schema = freshSchemaName();
    const a = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 1 });
    const b = createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 1 });
    return {
      a,
      b,
      async close() {
        await a.close();
        await b.close();
        await dropSchema(schema);
      },
    };
  });
});

describeWithPostgres("the README's createClaudeSessionStore example", () => {
  const document = "packages/backends/README.md";
  // `node --import` it: `@anthropic-ai/claude-agent-sdk` is then a stand-in replaying the real
  // SDK's recorded messages (the SDK is not installed in the workspace), which resumes only a
  // session the sessionStore it is given holds.
  const standIn = fileURLToPath(new URL("../packages/backends/src/claude-agent-sdk/__fixtures__/readme-sdk/register.mjs", import.meta.url));
  /** The session the stand-in's recording resumes (the real SDK's session id). */
  const recordedSession = "b1097c5d-9f8c-403c-b81c-8e2561cc231d";

  it("runs as written against PostgreSQL and prints what the README says; a session the store lacks is resume_failed", { timeout: 120_000 }, async () => {
    const readme = await readFile(path.join(repoRoot, document), "utf8");
    const block = /<!-- example:claude-session-store[^>]*-->\s*```ts\n([\s\S]*?\n)```/.exec(readme)?.[1];
    expect(block, "the README has the example").toBeDefined();
    // The example opens the store with its default schema: a database of its own keeps it apart.
    const database = freshSchemaName();
    await adminQuery(`CREATE DATABASE "${database}"`);
    const url = new URL(testPostgresUrl);
    url.pathname = `/${database}`;
    const file = path.join(repoRoot, "packages/backends", `.readme-claude-session-store-${process.pid}.ts`);
    await writeFile(file, block!);
    try {
      // Host A's turn mirrored the session into the store (as the SDK does through its sessionStore).
      const hostA = createPostgresStore({ connectionString: url.href, poolSize: 1 });
      await createClaudeSessionStore({ store: hostA }).append({ projectKey: "-work-harbor-project", sessionId: recordedSession }, [
        { type: "user", uuid: "u-1", message: { role: "user", content: "Summarize README.md" }, sessionId: recordedSession },
        { type: "assistant", uuid: "u-2", parentUuid: "u-1", message: { role: "assistant", content: [{ type: "text", text: "README.md describes Harbor, a linter for Helm charts." }] } },
      ]);
      await hostA.close();
      const env = { NODE_OPTIONS: `--import=${standIn}`, DATABASE_URL: url.href };
      const output = await runTs(file, [], { env: { ...env, CLAUDE_THREAD_ID: recordedSession } });
      expect(output.stderr).toBe("");
      expect(output.code).toBe(0);
      const printed = await readmePrinted(document, "\\nprints \\(the fake provider's answer again\\)\\n");
      expect(printed).toBe("Next I would add the --fix flag.\n(the same thread, 9 output tokens)\n");
      expect(output.stdout).toBe(printed);
      // A thread the store does not hold: the example throws the turn's resume_failed.
      const unknown = await runTs(file, [], { env: { ...env, CLAUDE_THREAD_ID: "6f1e3c1a-0000-4000-8000-000000000001" } });
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain("could not resume session 6f1e3c1a-0000-4000-8000-000000000001");
      expect(unknown.stderr).toContain("resume_failed");
    } finally {
      await rm(file, { force: true });
      await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
  });
});

describe("createClaudeSessionStore options", () => {
  it("refuses a store without logs and a bad namespace with invalid_input", () => {
    for (const options of [{ store: {} }, { store: createMemoryStore(), namespace: "../x" }, { store: createMemoryStore(), pageSize: 0 }]) {
      let thrown: unknown;
      try {
        createClaudeSessionStore(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(KeelError.is(thrown) && thrown.code).toBe("invalid_input");
    }
  });

  it("rejects with the store's error when the store fails", async () => {
    const store = createMemoryStore();
    await store.close();
    await expect(createClaudeSessionStore({ store }).load({ projectKey: "/p", sessionId: SESSION })).rejects.toBeInstanceOf(KeelError);
  });
});
