import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { importSkill } from "@keel/skills";
import { afterAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "./support/store-fs-child.js";

const made: string[] = [];
const workers: Worker[] = [];
afterAll(() => {
  for (const worker of workers) worker.child.kill("SIGKILL");
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const WORKER = "test/support/skills-swap-worker.ts";
const REPLACEMENTS = 50;
/** Short, so that old versions are removed while the reader polls: removal must not race it either. */
const GRACE_MS = 1_000;

type ReaderResult = {
  rounds: number;
  absentInView: number;
  absentInListing: number;
  absentFile: number;
  partialFile: number;
  absentBody: number;
  partialBody: number;
  errors: string[];
  versions: number[];
};

const resultOf = (worker: Worker) => JSON.parse(worker.lines.find((line) => line.startsWith("result "))!.slice("result ".length)) as unknown;

describe("@keel/skills: a managed skill replaced 50 times while another process reads it", () => {
  it("the reader never finds it absent or partly written: not in resolve, the listing, SKILL.md or readBody", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-skills-swap-"));
    made.push(dir);
    const layer = path.join(dir, "layer");
    const first = path.join(dir, "first", "swap-probe");
    mkdirSync(first, { recursive: true });
    writeFileSync(first + "/SKILL.md", "---\nname: swap-probe\ndescription: Probe skill, version 0. Use when probing swaps.\n---\nbody\nend of version 0\n");
    (await importSkill({ from: first, layer, role: "engineer", routing: "unclassified" }))._unsafeUnwrap();

    const reader = startWorker(WORKER, ["reader", layer, "engineer"]);
    const writer = startWorker(WORKER, ["writer", layer, "engineer", path.join(dir, "sources"), String(REPLACEMENTS), String(GRACE_MS)]);
    workers.push(reader, writer);
    await Promise.all([reader.waitFor(/^ready$/), writer.waitFor(/^loaded$/)]);
    writer.child.stdin!.write("go\n");
    const written = await Promise.race([
      writer.exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`writer: ${writer.lines.join("|")} ${writer.stderr()} reader: ${reader.lines.join("|")} ${reader.stderr().slice(-500)}`)), 120_000)),
    ]);
    expect(written.code, writer.stderr()).toBe(0);
    reader.child.stdin!.write("stop\n");
    const read = await reader.exited;
    expect(read.code, reader.stderr()).toBe(0);

    expect(resultOf(writer)).toEqual({ replaced: REPLACEMENTS });
    const counts = resultOf(reader) as ReaderResult;
    console.log(`reader: ${counts.rounds} rounds, versions seen ${counts.versions.length} (${counts.versions[0]}…${counts.versions.at(-1)})`);
    expect(counts.errors).toEqual([]);
    expect({ ...counts, rounds: undefined, versions: undefined, errors: undefined }).toEqual({
      absentInView: 0,
      absentInListing: 0,
      absentFile: 0,
      partialFile: 0,
      absentBody: 0,
      partialBody: 0,
    });
    // The reader overlapped the writer: it saw several versions, not only the first or the last.
    expect(counts.versions.length).toBeGreaterThan(2);
    expect(counts.rounds).toBeGreaterThan(REPLACEMENTS);

    // The skill is a link to its last version; versions past the grace were removed on the way.
    const role = path.join(layer, "engineer");
    const versions = readdirSync(role).filter((name) => name.startsWith(".swap-probe@"));
    expect(versions).toContain(readlinkSync(path.join(role, "swap-probe")));
    expect(versions.length).toBeLessThan(REPLACEMENTS + 1);
    expect(readdirSync(role).filter((name) => name.startsWith(".keel-") && name !== ".keel-library.json")).toEqual([]);
  });
});
