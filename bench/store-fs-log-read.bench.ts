import fs, { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { afterAll, bench, describe } from "vitest";

/**
 * Reading a log back from the filesystem store against the floor: read the file and
 * `JSON.parse` every line. Logs of 1,000, 10,000 and 100,000 records of ~200 bytes, appended in
 * batches of 1,000. Targets (issue 31): a whole-log read within 1.5× the floor by an instance
 * that has the log indexed (warm), within 2× by a new instance (its first read indexes the log
 * in the same pass).
 *
 * The table printed first is the one to read: single calls interleaved in rounds (the order
 * rotated each round), so that a changing load on a shared machine hits every row alike;
 * medians, with the quartiles and the range, and the median CPU time of a call
 * (`process.cpuUsage`: every thread, garbage collection included). The floor is shown two ways: keeping the parsed
 * lines (as a read must: it returns them) and dropping each at once (a cheaper garbage
 * collection, not a cheaper read); ratios are given over both. vitest's rows follow.
 */

const root = mkdtempSync(path.join(tmpdir(), "keel-fs-log-read-bench-"));
const record = (index: number) => ({ index, text: "r".repeat(180) });
const key = ["runs", "big"];

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function filledLog(count: number): Promise<{ dir: string; file: string }> {
  const dir = path.join(root, `log-${count}`);
  const writer = createFsStore({ dir });
  for (let start = 0; start < count; start += 1_000) {
    const batch = Array.from({ length: Math.min(1_000, count - start) }, (_, offset) => ({ id: `r${start + offset}`, value: record(start + offset) }));
    (await writer.logs.append(key, batch))._unsafeUnwrap();
  }
  await writer.close();
  return { dir, file: path.join(dir, "runs", "big.jsonl") };
}

/** The floor, keeping what it parsed (every record stays reachable until the next call, as a read's answer does). */
function floorKeep(file: string, count: number): unknown[] {
  const kept: unknown[] = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) if (line.length > 0) kept.push(JSON.parse(line));
  if (kept.length !== count + 1) throw new Error(`parsed ${kept.length} lines`);
  return kept;
}

/** The floor, dropping each parsed line at once. */
function floorDrop(file: string, count: number): void {
  let lines = 0;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) if (line.length > 0) (JSON.parse(line), lines++);
  if (lines !== count + 1) throw new Error(`parsed ${lines} lines`);
}

async function readAll(store: KeelStore, count: number): Promise<unknown[]> {
  const records = (await store.logs.read(key))._unsafeUnwrap();
  if (records.length !== count) throw new Error(`read ${records.length}`);
  return records;
}

async function newInstanceRead(dir: string, count: number): Promise<unknown[]> {
  const fresh = createFsStore({ dir });
  const records = await readAll(fresh, count);
  await fresh.close();
  return records;
}

const logCounts = [1_000, 10_000, 100_000];
const filledLogs = await Promise.all(logCounts.map(filledLog));

/** Interleaved rounds per size (KEEL_BENCH_LOG_ROUNDS scales them: default 1). */
const roundsScale = Number(process.env["KEEL_BENCH_LOG_ROUNDS"] ?? 1);

async function interleaved(): Promise<void> {
  const lines: string[] = [];
  for (const [position, count] of logCounts.entries()) {
    const { dir, file } = filledLogs[position]!;
    const warm = createFsStore({ dir });
    await readAll(warm, count);
    let answer: unknown;
    const tasks: [string, () => unknown][] = [
      ["floor: read + JSON.parse every line, kept", () => (answer = floorKeep(file, count))],
      ["floor: the same, each line dropped", () => floorDrop(file, count)],
      ["logs.read, log indexed by this instance (warm)", async () => (answer = await readAll(warm, count))],
      ["open + logs.read, a new instance", async () => (answer = await newInstanceRead(dir, count))],
    ];
    const rounds = Math.max(3, Math.round((count >= 100_000 ? 9 : count >= 10_000 ? 15 : 60) * roundsScale));
    const samples = tasks.map(() => [] as number[]);
    const cpu = tasks.map(() => [] as number[]);
    for (let round = -1; round < rounds; round++) {
      for (let turn = 0; turn < tasks.length; turn++) {
        const index = (turn + Math.max(0, round)) % tasks.length;
        answer = undefined;
        const started = performance.now();
        const cpuStarted = process.cpuUsage();
        await tasks[index]![1]();
        const used = process.cpuUsage(cpuStarted);
        if (round < 0) continue; // warm-up
        samples[index]!.push(performance.now() - started);
        cpu[index]!.push((used.user + used.system) / 1000);
      }
    }
    void answer;
    await warm.close();
    const sorted = samples.map((values) => [...values].sort((left, right) => left - right));
    const quantile = (values: number[], q: number) => values[Math.min(values.length - 1, Math.floor(values.length * q))]!;
    const keepMedian = quantile(sorted[0]!, 0.5);
    const dropMedian = quantile(sorted[1]!, 0.5);
    const cpuMedians = cpu.map((values) => quantile([...values].sort((left, right) => left - right), 0.5));
    lines.push(`  ${count.toLocaleString("en-US")} records (${(fs.statSync(file).size / 2 ** 20).toFixed(1)} MiB), ${rounds} rounds:`);
    for (const [index, [label]] of tasks.entries()) {
      const values = sorted[index]!;
      const median = quantile(values, 0.5);
      lines.push(
        `    ${label.padEnd(46)} | median ${median.toFixed(2)} ms (p25 ${quantile(values, 0.25).toFixed(2)}, p75 ${quantile(values, 0.75).toFixed(2)}, range ${values[0]!.toFixed(2)}–${values.at(-1)!.toFixed(2)}) | ${(median / keepMedian).toFixed(2)}x the floor kept, ${(median / dropMedian).toFixed(2)}x dropped | CPU median ${cpuMedians[index]!.toFixed(2)} ms, ${(cpuMedians[index]! / cpuMedians[0]!).toFixed(2)}x the floor kept's`,
      );
    }
  }
  console.log(`[store-fs log read bench] interleaved (targets: warm within 1.5x the floor, a new instance within 2x):\n${lines.join("\n")}`);
}
await interleaved();

for (const [position, count] of logCounts.entries()) {
  describe(`logs.read: ${count.toLocaleString("en-US")} records, all of them`, () => {
    const options = { time: count >= 100_000 ? 4_000 : 1_500, warmupTime: 200, iterations: 3 };
    const log = filledLogs[position]!;
    let warm: KeelStore | undefined;
    afterAll(() => warm?.close());
    bench("floor: read the file + JSON.parse every line", () => void floorKeep(log.file, count), options);
    bench(
      "@keel/store-fs logs.read (log indexed by this instance)",
      async () => {
        warm ??= createFsStore({ dir: log.dir });
        await readAll(warm, count);
      },
      options,
    );
    bench(
      "@keel/store-fs open + logs.head (a new instance reads the tail only)",
      async () => {
        const fresh = createFsStore({ dir: log.dir });
        const head = (await fresh.logs.head(key))._unsafeUnwrap();
        await fresh.close();
        if (head?.lastSeq !== count) throw new Error(`head ${head?.lastSeq}`);
      },
      options,
    );
    bench("@keel/store-fs open + logs.read (a new instance indexes and reads in one pass)", () => newInstanceRead(log.dir, count).then(() => undefined), options);
  });
}
