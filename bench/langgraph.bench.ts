import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, uuid6, type BaseCheckpointSaver, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, bench, describe } from "vitest";
import { adminQuery, dropSchema, freshSchemaName, probeTestPostgres, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";

/**
 * @keel/langgraph beside LangGraph's own SqliteSaver and PostgresSaver, in one run.
 * put + getTuple: one step of a graph (a checkpoint with a growing "messages" channel and a
 * changing "step" channel, then the latest read back). list: 1,000 checkpoints of one thread.
 * The chat shape (issue 31 §4): a message appended to "messages" at every step, 50 steps per
 * thread, as a chat agent writes; its list row lists the same 1,000-checkpoint thread.
 *
 * Durability, compared honestly: SqliteSaver opens better-sqlite3 in WAL mode and sets no
 * `synchronous`, so it runs at better-sqlite3's compiled default for WAL, NORMAL
 * (SQLITE_DEFAULT_WAL_SYNCHRONOUS=1): a commit is not fsynced, it survives a process crash but
 * not a power cut. Keel's SQLite store defaults to FULL (every commit fsynced). Both Keel rows
 * are shown: "synchronous normal" is the like-for-like one. PostgresSaver and Keel's PostgreSQL
 * store both commit with the server's own (fsynced) commit.
 *
 * Both sides are published builds loaded by Node itself: LangGraph's from node_modules, Keel's
 * from each package's dist/ (the bench-built project of vitest.config.ts; `pnpm bench` builds
 * first). A build older than its sources is refused rather than measured.
 */

/** The Keel packages this file measures; each must have a dist/ build newer than its src/. */
const measured = ["core", "store", "store-sqlite", "store-postgres", "langgraph"];
const packagesDir = fileURLToPath(new URL("../packages/", import.meta.url));
const newest = (dir: string): number =>
  Math.max(0, ...readdirSync(dir, { withFileTypes: true }).map((entry) => (entry.isDirectory() ? newest(path.join(dir, entry.name)) : statSync(path.join(dir, entry.name)).mtimeMs)));
for (const name of measured) {
  let built: number;
  try {
    built = statSync(path.join(packagesDir, name, "dist", "index.js")).mtimeMs;
  } catch {
    throw new Error(`bench/langgraph.bench.ts measures the built packages: packages/${name}/dist is missing; run \`pnpm build\` first (\`pnpm bench\` does)`);
  }
  if (newest(path.join(packagesDir, name, "src")) > built) {
    throw new Error(`bench/langgraph.bench.ts measures the built packages: packages/${name}/dist is older than its src/; run \`pnpm build\` first (\`pnpm bench\` does)`);
  }
}
const { createKeelCheckpointer } = await import("@keel/langgraph");
const { createPostgresStore } = await import("@keel/store-postgres");
const { createSqliteStore } = await import("@keel/store-sqlite");

const root = mkdtempSync(path.join(tmpdir(), "keel-langgraph-bench-"));
const metadata = { source: "loop" as const, step: 0, parents: {} };
/** A message history as plain JSON (the rows below, and the first interleaved table). */
const messages = Array.from({ length: 20 }, (_, index) => ({ role: "user", content: `message ${index} ${"x".repeat(200)}` }));
/** The same history as LangChain message objects, which both savers' serializer revives (the second interleaved table). */
const langchainMessages: BaseMessage[] = Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? new HumanMessage(`message ${index} ${"x".repeat(200)}`) : new AIMessage(`message ${index} ${"x".repeat(200)}`)));
type History = typeof messages | BaseMessage[];

function step(index: number, history: History = messages): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages: history, step: index }, channel_versions: { messages: 1, step: index + 1 } };
}

async function putAndGet(saver: BaseCheckpointSaver, thread: string, state: { config: RunnableConfig; index: number }, history: History = messages): Promise<void> {
  const config = state.index === 0 ? { configurable: { thread_id: thread } } : state.config;
  state.config = await saver.put(config, step(state.index, history), metadata, state.index === 0 ? { messages: 1, step: 1 } : { step: state.index + 1 });
  state.index += 1;
  await saver.getTuple({ configurable: { thread_id: thread } });
}

/** The chat shape (issue 31 §4): 50 steps per thread, each appending one message to `messages`, as a chat agent's graph does. */
const CHAT_STEPS = 50;
const chatMessages = Array.from({ length: CHAT_STEPS }, (_, index) => ({ role: index % 2 === 0 ? "user" : "assistant", content: `turn ${index} ${"x".repeat(200)}` }));

async function chatPutAndGet(saver: BaseCheckpointSaver, threadBase: string, state: { config: RunnableConfig; index: number }): Promise<void> {
  const at = state.index % CHAT_STEPS;
  const thread = `${threadBase}-${Math.floor(state.index / CHAT_STEPS)}`;
  const config = at === 0 ? { configurable: { thread_id: thread } } : state.config;
  const checkpoint: Checkpoint = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages: chatMessages.slice(0, at + 1), step: at }, channel_versions: { messages: at + 1, step: at + 1 } };
  state.config = await saver.put(config, checkpoint, metadata, { messages: at + 1, step: at + 1 });
  state.index += 1;
  await saver.getTuple({ configurable: { thread_id: thread } });
}

async function fill(saver: BaseCheckpointSaver, thread: string, count: number, history: History = messages): Promise<void> {
  let config: RunnableConfig = { configurable: { thread_id: thread } };
  for (let index = 0; index < count; index += 1) config = await saver.put(config, step(index, history), metadata, index === 0 ? { messages: 1, step: 1 } : { step: index + 1 });
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
for (const [name, saver] of savers) if (saver) await fill(saver, "list-1000-langchain", 1000, langchainMessages);

/**
 * The comparison the targets state, interleaved (the rows below run seconds apart, and a load
 * change on a shared machine moves one and not the other): each round times a block of graph
 * steps on every saver in turn, the order rotated each round (blocks of 300 steps over SQLite,
 * 30 over PostgreSQL: long enough to take in SQLite's WAL checkpoints), then the rounds of one
 * listing each. The ratio of a round is LangGraph's time over Keel's (above 1: Keel faster),
 * printed as the median over the rounds with its quartiles. Run once with the history as plain
 * JSON, once as LangChain message objects (revived by the serializer on both sides, one by one).
 */
async function interleaved(rounds: number, history: History | "chat", title: string): Promise<void> {
  const pairs: [string, BaseCheckpointSaver | undefined, BaseCheckpointSaver | undefined][] = [
    ["SQLite, synchronous normal (as SqliteSaver)", keelSqliteNormal, sqliteSaver],
    ["SQLite, synchronous full (Keel's default)", keelSqlite, sqliteSaver],
    ["PostgreSQL", keelPostgres, postgresSaver],
  ];
  const live = savers.filter((entry): entry is [string, BaseCheckpointSaver] => entry[1] !== undefined);
  const states = new Map(live.map(([name]) => [name, { config: {}, index: 0 }]));
  const stepsOf = (saver: BaseCheckpointSaver) => (saver === postgresSaver || saver === keelPostgres ? 30 : 300);
  const times = { step: new Map(live.map(([name]) => [name, [] as number[]])), list: new Map(live.map(([name]) => [name, [] as number[]])) };
  for (const kind of ["step", "list"] as const) {
    for (let round = -1; round < rounds; round++) {
      for (let at = 0; at < live.length; at++) {
        const [name, saver] = live[(at + Math.max(round, 0)) % live.length]!;
        const started = performance.now();
        if (kind === "step") {
          const steps = stepsOf(saver);
          const thread = `interleaved-${title.replace(/\W+/g, "-")}-${name.replace(/\W+/g, "-")}`;
          for (let step = 0; step < steps; step++) {
            if (history === "chat") await chatPutAndGet(saver, thread, states.get(name)!);
            else await putAndGet(saver, thread, states.get(name)!, history);
          }
        } else if ((await listAll(saver, history === "chat" || history === messages ? "list-1000" : "list-1000-langchain")) !== 1000) {
          throw new Error(`${name} listed the wrong number of checkpoints`);
        }
        if (round >= 0) times[kind].get(name)!.push(performance.now() - started); // round -1: warm-up
      }
    }
  }
  const quartiles = (values: number[]) => {
    const sorted = [...values].sort((left, right) => left - right);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
    return `${at(0.5).toFixed(2)}x (quartiles ${at(0.25).toFixed(2)}-${at(0.75).toFixed(2)})`;
  };
  const rows: string[] = [];
  for (const [label, keel, theirs] of pairs) {
    if (!keel || !theirs) continue;
    const keelName = live.find(([, saver]) => saver === keel)![0];
    const theirName = live.find(([, saver]) => saver === theirs)![0];
    const ratio = (kind: "step" | "list") => times[kind].get(theirName)!.map((time, at) => time / times[kind].get(keelName)![at]!);
    rows.push(`  ${label.padEnd(44)} | put + getTuple ${quartiles(ratio("step"))} | list 1,000 ${quartiles(ratio("list"))}`);
  }
  console.log(`[langgraph bench] ${title}: Keel's speed over LangGraph's saver's (above 1: Keel faster), ${rounds} interleaved rounds:\n${rows.join("\n")}`);
}
const rounds = Number(process.env.KEEL_BENCH_LANGGRAPH_ROUNDS ?? 12);
await interleaved(rounds, messages, "history as plain JSON");
await interleaved(rounds, langchainMessages, "history as LangChain messages");
await interleaved(rounds, "chat", "chat shape (a message appended to messages at every step, 50 steps per thread)");

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
