import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, bench, describe } from "vitest";

/**
 * The SQL stores beside memory and fs, and beside LangGraph's checkpointers, in one run.
 *
 * - "doc put+get": write a ~1 KiB JSON state under compare-and-swap, then read it back (what a
 *   role turn does with its capsule). LangGraph's pair is `put` + `getTuple` of a checkpoint
 *   holding the same state in `channel_values`.
 * - "log append": one ~200-byte record per call.
 * - SQLite durability: LangGraph's SqliteSaver runs WAL with better-sqlite3's default
 *   `synchronous=NORMAL`, so the comparison row of Keel uses `synchronous: "normal"` too; the
 *   default `full` row is shown beside it. "raw better-sqlite3" runs Keel's own statements
 *   (BEGIN IMMEDIATE, the write that checks its own version, COMMIT, read) with no validation,
 *   no canonical JSON.
 * - Postgres: the server at KEEL_TEST_POSTGRES_URL (default the local one), one schema each.
 * - 8 processes: role turns through createKeel over one Postgres schema, turns per second.
 */

const url = process.env.KEEL_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const root = mkdtempSync(path.join(tmpdir(), "keel-sql-bench-"));
const suffix = `${process.pid}_${Date.now().toString(36)}`;
const schemas = { keel: `keel_bench_${suffix}`, langgraph: `lg_bench_${suffix}`, hosts: `keel_hosts_${suffix}` };
const state = { objective: "ship the storage layer", notes: "n".repeat(900), turn: 0, tags: ["a", "b"] };
const options = { time: 2_000, warmupTime: 300 };

const stores: Record<string, KeelStore> = {
  memory: createMemoryStore(),
  fs: createFsStore({ dir: path.join(root, "fs") }),
  "sqlite (full)": createSqliteStore({ file: path.join(root, "full.db") }),
  "sqlite (normal)": createSqliteStore({ file: path.join(root, "normal.db"), synchronous: "normal" }),
  postgres: createPostgresStore({ connectionString: url, schema: schemas.keel, poolSize: 4 }),
};
const versions = new Map<string, number>();
let appended = 0;

async function keelPutGet(name: string): Promise<void> {
  const store = stores[name]!;
  const version = versions.get(name) ?? 0;
  const written = await store.docs.put(["threads", "t1"], { ...state, turn: version }, version === 0 ? { create: true } : { expectedVersion: version });
  if (written.isErr()) throw written.error;
  versions.set(name, written.value.version);
  const read = await store.docs.get(["threads", "t1"]);
  if (read.isErr() || read.value?.version !== written.value.version) throw new Error("read back failed");
}

// Raw better-sqlite3 running the statements the Keel SQLite store runs, at synchronous=NORMAL.
const raw = new Database(path.join(root, "raw.db"));
raw.pragma("journal_mode = WAL");
raw.pragma("synchronous = NORMAL");
raw.exec("CREATE TABLE docs (key TEXT PRIMARY KEY, version INTEGER NOT NULL, deleted INTEGER NOT NULL, value TEXT, bytes INTEGER NOT NULL, updated_at TEXT NOT NULL) WITHOUT ROWID");
const rawCreate = raw.prepare<[string, string, number, string], { version: number }>(
  "INSERT INTO docs (key, version, deleted, value, bytes, updated_at) VALUES (?, 1, 0, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET version = docs.version + 1, deleted = 0, value = excluded.value, bytes = excluded.bytes, updated_at = excluded.updated_at WHERE docs.deleted = 1 RETURNING version",
);
const rawReplace = raw.prepare<[string, number, string, string, number], { version: number }>(
  "UPDATE docs SET version = version + 1, value = ?, bytes = ?, updated_at = ? WHERE key = ? AND version = ? AND deleted = 0 RETURNING version",
);
let rawVersion = 0;
const rawGet = raw.prepare<[string], { version: number; value: string; updated_at: string }>("SELECT version, value, updated_at FROM docs WHERE key = ?");
let rawTurn = 0;
function rawPutGet(): void {
  const text = JSON.stringify({ ...state, turn: rawTurn++ });
  raw.exec("BEGIN IMMEDIATE");
  const updatedAt = new Date().toISOString();
  const written = rawVersion === 0 ? rawCreate.get("threads\u001ft1", text, text.length, updatedAt) : rawReplace.get(text, text.length, updatedAt, "threads\u001ft1", rawVersion);
  if (!written) throw new Error("raw put refused");
  rawVersion = written.version;
  raw.exec("COMMIT");
  const row = rawGet.get("threads\u001ft1");
  JSON.parse(row!.value);
}

// LangGraph's checkpointers.
const sqliteSaver = SqliteSaver.fromConnString(path.join(root, "langgraph.db"));
const postgresSaver = PostgresSaver.fromConnString(url, { schema: schemas.langgraph });
let postgresSaverReady: Promise<void> | undefined;
const threadConfig = (thread: string) => ({ configurable: { thread_id: thread, checkpoint_ns: "" } });
function checkpoint(turn: number): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(turn), ts: new Date().toISOString(), channel_values: { state: { ...state, turn } }, channel_versions: { state: turn + 1 } };
}
let langgraphTurn = 0;
async function postgresSaverPutGet(): Promise<void> {
  postgresSaverReady ??= postgresSaver.setup();
  await postgresSaverReady;
  await saverPutGet(postgresSaver);
}
async function saverPutGet(saver: SqliteSaver | PostgresSaver): Promise<void> {
  const turn = langgraphTurn++;
  await saver.put(threadConfig("t1"), checkpoint(turn), { source: "loop", step: turn, parents: {} }, { state: turn + 1 });
  const tuple = await saver.getTuple(threadConfig("t1"));
  if (!tuple) throw new Error("getTuple found nothing");
}


/**
 * Runs the candidates in rotation, `rounds` times `perRound` calls each, and prints each one's
 * median calls per second, its range over the rounds, and its ratio to `base` (the median of the
 * per-round ratios): interleaving keeps a noisy machine from favouring whoever ran first. Then
 * the same for the process's CPU time per call (user + system, every thread), as a ratio to
 * `base`: the CPU targets (SQLite put + get within 1.5× raw better-sqlite3) are read there.
 */
async function interleaved(title: string, base: string, candidates: Record<string, () => unknown>, rounds: number, perRound: number): Promise<void> {
  const rates: Record<string, number[]> = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(candidates)) {
      const started = performance.now();
      const cpuStarted = process.cpuUsage();
      for (let call = 0; call < perRound; call++) await run();
      const used = process.cpuUsage(cpuStarted);
      rates[name]!.push((perRound * 1000) / (performance.now() - started));
      cpu[name]!.push((used.user + used.system) / perRound);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const lines = [`${title} (interleaved: ${rounds} rounds × ${perRound} calls)`];
  for (const [name, values] of Object.entries(rates)) {
    const ratios = values.map((rate, index) => rate / rates[base]![index]!);
    lines.push(
      `  ${name.padEnd(44)} ${median(values).toFixed(0).padStart(7)} calls/s  (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})  ` +
        (name === base ? "base" : `${median(ratios).toFixed(2)}× ${base} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`),
    );
  }
  lines.push(`  CPU per call (µs, median over rounds), and ${base}'s CPU as a multiple of each:`);
  for (const [name, values] of Object.entries(cpu)) {
    const ratios = values.map((used, index) => cpu[base]![index]! / used);
    lines.push(
      `  ${name.padEnd(44)} ${median(values).toFixed(1).padStart(7)} µs CPU  ` +
        (name === base ? "base" : `${base} uses ${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`),
    );
  }
  console.log(lines.join("\n"));
}

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 };

afterAll(async () => {
  for (const store of Object.values(stores)) await store.close();
  raw.close();
  await postgresSaver.end();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const schema of Object.values(schemas)) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
  rmSync(root, { recursive: true, force: true });
});

describe("doc put+get, SQLite at synchronous=NORMAL: Keel vs LangGraph SqliteSaver vs raw better-sqlite3", () => {
  bench("keel sqlite put + get (normal)", () => keelPutGet("sqlite (normal)"), options);
  bench("langgraph SqliteSaver put + getTuple", () => saverPutGet(sqliteSaver), options);
  bench("raw better-sqlite3, the same statements", rawPutGet, options);
  bench(
    "interleaved comparison (printed)",
    () =>
      interleaved("doc put+get, SQLite synchronous=NORMAL", "keel sqlite put + get (normal)", {
        "keel sqlite put + get (normal)": () => keelPutGet("sqlite (normal)"),
        "langgraph SqliteSaver put + getTuple": () => saverPutGet(sqliteSaver),
        "raw better-sqlite3, the same statements": rawPutGet,
      }, 15, 200),
    once,
  );
});

describe("doc put+get, PostgreSQL: Keel vs LangGraph PostgresSaver", () => {
  bench("keel postgres put + get", () => keelPutGet("postgres"), options);
  bench("langgraph PostgresSaver put + getTuple", postgresSaverPutGet, options);
  bench(
    "interleaved comparison (printed)",
    () =>
      interleaved("doc put+get, PostgreSQL", "keel postgres put + get", {
        "keel postgres put + get": () => keelPutGet("postgres"),
        "langgraph PostgresSaver put + getTuple": postgresSaverPutGet,
      }, 9, 30),
    once,
  );
});

describe("doc put+get across Keel stores", () => {
  for (const name of Object.keys(stores)) bench(`${name} put + get`, () => keelPutGet(name), options);
});

describe("log append: one ~200-byte record", () => {
  for (const name of Object.keys(stores)) {
    bench(
      `${name} append`,
      async () => {
        const id = `r${appended++}`;
        const outcome = await stores[name]!.logs.append(["runs", "bench"], [{ id, value: { id, text: "r".repeat(180) } }]);
        if (outcome.isErr()) throw outcome.error;
      },
      options,
    );
  }
});

describe("8 processes, role turns over one PostgreSQL schema", () => {
  bench(
    "8 processes × 20 role turns (createKeel, scripted backend)",
    async () => {
      const started = Date.now();
      const workers = Array.from({ length: 8 }, (_, index) =>
        spawn(process.execPath, ["--import", "tsx", "--conditions=@keel/source", "test/support/store-postgres-turn-worker.ts", url, schemas.hosts, String(index), "20", "1000000"], {
          stdio: ["pipe", "pipe", "inherit"],
        }),
      );
      let turns = 0;
      let loaded = 0;
      let goAt = 0;
      await new Promise<void>((resolve, reject) => {
        let exited = 0;
        for (const worker of workers) {
          worker.stdout.setEncoding("utf8").on("data", (chunk: string) => {
            for (const line of chunk.split("\n")) {
              if (line === "loaded" && ++loaded === workers.length) {
                goAt = Date.now();
                for (const each of workers) each.stdin.write("go\n");
              }
              if (line.startsWith("turn ")) turns++;
            }
          });
          worker.on("exit", (code) => (code === 0 ? ++exited === workers.length && resolve() : reject(new Error(`a worker exited with ${code}`))));
        }
      });
      const seconds = (Date.now() - goAt) / 1000;
      console.log(`8-process PostgreSQL: ${turns} role turns in ${seconds.toFixed(2)} s = ${(turns / seconds).toFixed(1)} turns/s (start-up ${((goAt - started) / 1000).toFixed(1)} s not counted)`);
    },
    once,
  );
});
