import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createKeelCheckpointer } from "@keel/langgraph";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6, type BaseCheckpointSaver, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, bench, describe } from "vitest";
import { adminQuery, dropSchema, freshSchemaName, probeTestPostgres, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";

/**
 * @keel/langgraph beside LangGraph's own SqliteSaver and PostgresSaver, interleaved in one run.
 * put + getTuple: one step of a graph (a checkpoint with a growing "messages" channel and a
 * changing "step" channel, then the latest read back). list: 1,000 checkpoints of one thread.
 *
 * Durability, compared honestly: SqliteSaver opens better-sqlite3 in WAL mode and sets no
 * `synchronous`, so it runs at better-sqlite3's compiled default for WAL, NORMAL
 * (SQLITE_DEFAULT_WAL_SYNCHRONOUS=1): a commit is not fsynced, it survives a process crash but
 * not a power cut. Keel's SQLite store defaults to FULL (every commit fsynced). Both Keel rows
 * are shown: "synchronous normal" is the like-for-like one. PostgresSaver and Keel's PostgreSQL
 * store both commit with the server's own (fsynced) commit.
 */

const root = mkdtempSync(path.join(tmpdir(), "keel-langgraph-bench-"));
const metadata = { source: "loop" as const, step: 0, parents: {} };
const messages = Array.from({ length: 20 }, (_, index) => ({ role: "user", content: `message ${index} ${"x".repeat(200)}` }));

function step(index: number): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages, step: index }, channel_versions: { messages: 1, step: index + 1 } };
}

async function putAndGet(saver: BaseCheckpointSaver, thread: string, state: { config: RunnableConfig; index: number }): Promise<void> {
  const config = state.index === 0 ? { configurable: { thread_id: thread } } : state.config;
  state.config = await saver.put(config, step(state.index), metadata, state.index === 0 ? { messages: 1, step: 1 } : { step: state.index + 1 });
  state.index += 1;
  await saver.getTuple({ configurable: { thread_id: thread } });
}

async function fill(saver: BaseCheckpointSaver, thread: string, count: number): Promise<void> {
  let config: RunnableConfig = { configurable: { thread_id: thread } };
  for (let index = 0; index < count; index += 1) config = await saver.put(config, step(index), metadata, index === 0 ? { messages: 1, step: 1 } : { step: index + 1 });
}

async function listAll(saver: BaseCheckpointSaver, thread: string): Promise<number> {
  let count = 0;
  for await (const _tuple of saver.list({ configurable: { thread_id: thread } })) count += 1;
  return count;
}

const sqliteSaver = SqliteSaver.fromConnString(path.join(root, "langgraph.db"));
const keelSqliteStore = createSqliteStore({ file: path.join(root, "keel.db") });
const keelSqlite = createKeelCheckpointer({ store: keelSqliteStore });
const keelSqliteNormalStore = createSqliteStore({ file: path.join(root, "keel-normal.db"), synchronous: "normal" });
const keelSqliteNormal = createKeelCheckpointer({ store: keelSqliteNormalStore });
const postgresReachable = (await probeTestPostgres()) === undefined;
const postgresSchema = freshSchemaName();
const keelPostgresSchema = freshSchemaName();
const postgresSaver = postgresReachable ? PostgresSaver.fromConnString(testPostgresUrl, { schema: postgresSchema }) : undefined;
const keelPostgresStore = postgresReachable ? createPostgresStore({ connectionString: testPostgresUrl, schema: keelPostgresSchema, poolSize: 3 }) : undefined;
const keelPostgres = keelPostgresStore ? createKeelCheckpointer({ store: keelPostgresStore }) : undefined;
if (postgresSaver) {
  await adminQuery(`CREATE SCHEMA IF NOT EXISTS "${postgresSchema}"`);
  await postgresSaver.setup();
}

const savers: [string, BaseCheckpointSaver | undefined][] = [
  ["LangGraph SqliteSaver", sqliteSaver],
  ["Keel over SQLite, synchronous normal (as SqliteSaver)", keelSqliteNormal],
  ["Keel over SQLite, synchronous full (fsync per commit)", keelSqlite],
  ["LangGraph PostgresSaver", postgresSaver],
  ["Keel over PostgreSQL", keelPostgres],
];
for (const [name, saver] of savers) if (saver) await fill(saver, "list-1000", 1000);

afterAll(async () => {
  await keelSqliteStore.close();
  await keelSqliteNormalStore.close();
  await keelPostgresStore?.close();
  await postgresSaver?.end();
  if (postgresReachable) {
    await dropSchema(postgresSchema);
    await dropSchema(keelPostgresSchema);
  }
  rmSync(root, { recursive: true, force: true });
});

describe("put + getTuple (one graph step)", () => {
  for (const [name, saver] of savers) {
    if (!saver) continue;
    const state = { config: {}, index: 0 };
    const thread = `steps-${name.replace(/\W+/g, "-")}`;
    bench(name, () => putAndGet(saver, thread, state), { time: 2_000 });
  }
});

describe("list 1,000 checkpoints of one thread", () => {
  for (const [name, saver] of savers) {
    if (!saver) continue;
    bench(name, async () => {
      if ((await listAll(saver, "list-1000")) !== 1000) throw new Error(`${name} listed the wrong number of checkpoints`);
    }, { time: 3_000, iterations: 3 });
  }
});
