import { spawnSync } from "node:child_process";
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { createFsStore } from "@keel/store-fs";
import { importPiSession, importPiSessionToStore, openTranscript } from "@keel/transcript";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { sharedFixtures } from "../test/support/shared-fixtures.js";
import { branchedSession, linearSession } from "./support/transcript-sessions.js";

/**
 * Opening a session and building its context: Keel against pi 0.73.1's own
 * `SessionManager.open` + `buildSessionContext` on the same content, and against the floor (read
 * the file, `JSON.parse` every line and keep the result). Keel is measured two ways: importing the pi file
 * (`importPiSession` + `buildContext`) and opening its own filesystem store
 * (`openTranscript` + `buildContext`, after the same content was imported into it).
 *
 * Content: linear chains of 1k, 10k, 20k and 100k entries, a tree of 50 abandoned branches with
 * branch summaries (1k, 20k, 100k entries; the leaf's path crosses every summary), and pi's real
 * 1,018-entry fixture. vitest's rows cover the sizes up to 20k; the closing table measures every
 * size interleaved (each round runs the four contenders in turn, before vitest's rows) and prints medians with ranges,
 * the 100k/10k ratios, peak memory at 100k (each contender in a fresh process) and durable
 * append throughput beside pi's `appendMessage`.
 */

const root = mkdtempSync(path.join(tmpdir(), "keel-transcript-bench-"));
const piFixtures = sharedFixtures("sessions", "pi");
const fixture = path.join(piFixtures.dir, "large-session.v3-migrated.jsonl");

interface Content {
  name: string;
  file: string;
  storeDir: string;
  entries: number;
  bytes: number;
}

const contents: Content[] = [];
const plan: [string, () => string][] = [
  ["linear 1k", () => linearSession(1_000)],
  ["linear 10k", () => linearSession(10_000)],
  ["linear 20k", () => linearSession(20_000)],
  ["linear 100k", () => linearSession(100_000)],
  ["tree 1k", () => branchedSession(1_000)],
  ["tree 20k", () => branchedSession(20_000)],
  ["tree 100k", () => branchedSession(100_000)],
];
if (piFixtures.available) plan.push(["pi fixture (1,018 entries)", () => readFileSync(fixture, "utf8")]);

/**
 * The floor: read the file and `JSON.parse` every line, keeping the parsed lines (every
 * contender keeps the session in memory; a floor that dropped each object at once would
 * measure a cheaper garbage collection, not a cheaper load).
 */
function floor(file: string): number {
  const kept: unknown[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.length === 0) continue;
    kept.push(JSON.parse(line));
  }
  return kept.length;
}

function keelImport(file: string): number {
  const session = importPiSession(readFileSync(file, "utf8"))._unsafeUnwrap();
  return session.buildContext()._unsafeUnwrap().messages.length;
}

async function keelStore(dir: string): Promise<number> {
  const store = createFsStore({ dir });
  const transcript = (await openTranscript({ store, sessionId: "bench", create: false }))._unsafeUnwrap();
  const count = transcript.buildContext()._unsafeUnwrap().messages.length;
  await store.close();
  return count;
}

function pi(file: string): number {
  return SessionManager.open(file).buildSessionContext().messages.length;
}

beforeAll(async () => {
  for (const [name, make] of plan) {
    const slug = name.replace(/[^a-z0-9]+/gi, "-");
    const file = path.join(root, `${slug}.jsonl`);
    const text = make();
    writeFileSync(file, text);
    const storeDir = path.join(root, `store-${slug}`);
    const store = createFsStore({ dir: storeDir });
    (await importPiSessionToStore({ store, text, sessionId: "bench" }))._unsafeUnwrap();
    await store.close();
    const entries = text.split("\n").filter((line) => line.length > 0).length - 1;
    contents.push({ name, file, storeDir, entries, bytes: Buffer.byteLength(text) });
    // The contenders must agree before they are timed.
    const counts = [keelImport(file), await keelStore(storeDir), pi(file)];
    if (new Set(counts).size !== 1) throw new Error(`${name}: the contexts differ in length: ${counts.join(", ")}`);
  }
  // The closing table is measured first: its figures are the ones the targets are judged on.
  await summary();
}, 2_400_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

const options = { time: 0, iterations: 3, warmupIterations: 1, warmupTime: 0 };
/** Rounds of the closing table per content (KEEL_BENCH_ROUNDS, default 5; sessions of 100k entries get at most 3). */
const ROUNDS = Number(process.env["KEEL_BENCH_ROUNDS"] ?? 5);
for (const name of ["linear 1k", "linear 20k", "tree 1k", "tree 20k", "pi fixture (1,018 entries)"]) {
  if (!plan.some(([planned]) => planned === name)) continue;
  const content = () => contents.find((item) => item.name === name) as Content;
  describe(`open + buildContext: ${name}`, () => {
    bench("keel importPiSession + buildContext", () => void keelImport(content().file), options);
    bench("keel openTranscript (fs store) + buildContext", () => keelStore(content().storeDir).then(() => undefined), options);
    bench("pi SessionManager.open + buildSessionContext", () => void pi(content().file), options);
    bench("floor: read the file + JSON.parse every line", () => void floor(content().file), options);
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
const range = (values: number[]) => `${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))}`;

async function time(work: () => unknown): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function summary(): Promise<void> {
  // Each row is printed as soon as it is measured (a long run that is stopped keeps what it had).
  const rows = { push: (...lines: string[]) => console.log(lines.map((line) => `transcript bench | ${line}`).join("\n")) };
  console.log("\ntranscript benchmark (interleaved medians, ranges in parentheses)");
  const medians = new Map<string, Record<string, number>>();
  rows.push("content | entries | MiB | floor ms | keel import ms | keel store ms | pi ms | pi / keel import | pi / keel store | keel import / floor | keel store / floor");
  for (const content of contents) {
    const rounds = content.entries >= 100_000 ? Math.min(3, ROUNDS) : ROUNDS;
    const samples: Record<string, number[]> = { floor: [], import: [], store: [], pi: [] };
    const contenders: [string, () => unknown][] = [
      ["floor", () => floor(content.file)],
      ["import", () => keelImport(content.file)],
      ["store", () => keelStore(content.storeDir)],
      ["pi", () => pi(content.file)],
    ];
    for (let round = 0; round < rounds; round++) {
      for (let turn = 0; turn < contenders.length; turn++) {
        const [name, work] = contenders[(turn + round) % contenders.length] as [string, () => unknown];
        (samples[name] as number[]).push(await time(work));
      }
    }
    const m = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)])) as Record<string, number>;
    medians.set(content.name, m);
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    rows.push(
      `${content.name} | ${content.entries} | ${(content.bytes / 2 ** 20).toFixed(1)} | ${Math.round(m["floor"]!)} (${range(samples["floor"]!)}) | ${Math.round(m["import"]!)} (${range(samples["import"]!)}) | ${Math.round(m["store"]!)} (${range(samples["store"]!)}) | ${Math.round(m["pi"]!)} (${range(samples["pi"]!)}) | ${ratio(m["pi"]!, m["import"]!)} | ${ratio(m["pi"]!, m["store"]!)} | ${ratio(m["import"]!, m["floor"]!)} | ${ratio(m["store"]!, m["floor"]!)}`,
    );
  }
  const ten = medians.get("linear 10k");
  const hundred = medians.get("linear 100k");
  if (ten && hundred) {
    rows.push("");
    rows.push(`100k / 10k (linear): keel import ${(hundred["import"]! / ten["import"]!).toFixed(1)}, keel store ${(hundred["store"]! / ten["store"]!).toFixed(1)}, pi ${(hundred["pi"]! / ten["pi"]!).toFixed(1)}, floor ${(hundred["floor"]! / ten["floor"]!).toFixed(1)}`);
  }
  const big = contents.find((content) => content.name === "linear 100k");
  if (big) {
    rows.push("");
    rows.push("peak memory, linear 100k, each in a fresh process: contender | ms | max RSS MiB | heap after GC MiB");
    for (const contender of ["floor", "keel-import", "keel-store", "pi"]) {
      const run = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", "--conditions=@keel/source", "bench/support/transcript-memory.ts", contender, big.file, big.storeDir], {
        cwd: fileURLToPath(new URL("..", import.meta.url)),
        encoding: "utf8",
        maxBuffer: 1 << 20,
      });
      const result = JSON.parse(run.stdout.trim().split("\n").pop() ?? "{}") as { ms?: number; maxRssMiB?: number; heapUsedMiB?: number };
      rows.push(`${contender} | ${result.ms} | ${result.maxRssMiB} | ${result.heapUsedMiB}${run.status === 0 ? "" : ` (exit ${run.status}: ${run.stderr.slice(0, 200)})`}`);
    }
  }
  rows.push("");
  rows.push(...(await appendThroughput()));
}

/** Durable appends per second: Keel on its filesystem store (fsync), pi's appendMessage (appendFileSync, no fsync), and the durable floor (append + fsync). */
async function appendThroughput(): Promise<string[]> {
  const count = 300;
  const message = { role: "user" as const, content: [{ type: "text" as const, text: "m".repeat(900) }], timestamp: 1 };
  const store = createFsStore({ dir: path.join(root, "append-store") });
  const transcript = (await openTranscript({ store, sessionId: "append" }))._unsafeUnwrap();
  const keel = await time(async () => {
    for (let index = 0; index < count; index++) (await transcript.append({ type: "message", message }))._unsafeUnwrap();
  });
  await store.close();
  const manager = SessionManager.create("/tmp/bench", path.join(root, "append-pi"));
  manager.appendMessage({ role: "assistant", content: [{ type: "text", text: "first" }], api: "openai-completions", provider: "fake", model: "fake", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 1 });
  const piTime = await time(() => {
    for (let index = 0; index < count; index++) manager.appendMessage(message);
  });
  const floorFile = path.join(root, "append-floor.jsonl");
  const line = Buffer.from(`${JSON.stringify({ type: "message", id: "x", parentId: null, timestamp: "t", message })}\n`);
  const descriptor = openSync(floorFile, "a");
  const floorTime = await time(() => {
    for (let index = 0; index < count; index++) {
      writeSync(descriptor, line);
      fsyncSync(descriptor);
    }
  });
  closeSync(descriptor);
  const perSecond = (ms: number) => Math.round((count / ms) * 1000);
  return [
    `append throughput (${count} messages of ~1 KiB, one at a time): entries/s`,
    `keel transcript.append (fs store, fsync, acknowledged durable) | ${perSecond(keel)}`,
    `pi appendMessage (appendFileSync, no fsync: not durable) | ${perSecond(piTime)}`,
    `floor: write + fsync per entry | ${perSecond(floorTime)}`,
  ];
}
