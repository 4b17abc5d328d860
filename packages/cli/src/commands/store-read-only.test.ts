/**
 * Reading commands never create or migrate a store: `keel inspect`, the source of
 * `keel store copy`, `keel workflow status` (and `plan` and `catalog`, which read none). A missing
 * source is refused with a clear message and a non-zero exit, and the copy's target is opened
 * only once the source has been read, so a refused copy leaves no target behind. Each case runs
 * for a directory, a SQLite file and a PostgreSQL schema, and checks that nothing was created
 * (the directory or file absent, the schema absent from information_schema.schemata).
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "@keel/cli";
import { createFsStore } from "@keel/store-fs";
import { createSqliteStore } from "@keel/store-sqlite";
import { okValue } from "@keel/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { adminQuery, describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../../../store-postgres/test-support/postgres-test-database.js";
import { captureIo, hasStackTrace, temporaryDirectory } from "../../../../test/support/cli-harness.js";
import { writeSampleStore } from "../../../../test/support/cli-inspect-fixture.js";

let scratch: { dir: string; remove: () => void };
beforeEach(() => {
  scratch = temporaryDirectory("read-only");
});
afterEach(() => scratch.remove());

async function keel(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo({ cwd: scratch.dir });
  const code = await runCli(args, io);
  return { code, out: io.out, err: io.err };
}

/** A filesystem store with one document, at `name` in the scratch directory. */
async function fsSource(name = "src"): Promise<string> {
  const store = createFsStore({ dir: path.join(scratch.dir, name) });
  await okValue(store.docs.put(["missions", "m1"], { n: 1 }, { create: true }));
  await store.close();
  return name;
}

/**
 * Every entry under `dir` with its mode, and each file's size, mtime and content: equal hashes
 * mean nothing was created, changed or removed. A directory's mtime is left out: reading takes
 * key locks (a token renamed in and out of its directory under `_keel/locks/`), which changes it
 * and nothing else.
 */
function treeHash(dir: string): string {
  const hash = createHash("sha256");
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const full = path.join(current, name);
      const info = lstatSync(full);
      hash.update(`${path.relative(dir, full)}\0${info.mode}\0`);
      if (info.isDirectory()) walk(full);
      else hash.update(`${info.size}\0${info.mtimeMs}\0`).update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest("hex");
}

describe("a missing store given to a reading command", () => {
  const missing: [string, string, string][] = [
    ["a directory", "nothing", "nothing"],
    ["a SQLite file", "sqlite:nothing.db", "nothing.db"],
  ];

  it.each(missing)("keel inspect of %s: not_found, exit 1, nothing created", async (_kind, url, created) => {
    const outcome = await keel(["inspect", url]);
    expect(outcome.code).toBe(1);
    expect(outcome.err).toMatch(/\(not_found\)/);
    expect(hasStackTrace(outcome.err)).toBe(false);
    expect(existsSync(path.join(scratch.dir, created))).toBe(false);
    expect(readdirSync(scratch.dir)).toEqual([]);
  });

  it.each(missing)("keel store copy from %s: not_found, exit 1, neither source nor target created", async (_kind, url, created) => {
    for (const target of ["target", "sqlite:target.db"]) {
      const outcome = await keel(["store", "copy", url, target]);
      expect(outcome.code).toBe(1);
      expect(outcome.err).toMatch(/\(not_found\): no (Keel|SQLite) store/);
      expect(existsSync(path.join(scratch.dir, created))).toBe(false);
      expect(readdirSync(scratch.dir)).toEqual([]);
    }
  });

  it("keel store copy from a directory that is not a store, or a SQLite file without a Keel store: refused, both left as they were", async () => {
    mkdirSync(path.join(scratch.dir, "plain"));
    writeFileSync(path.join(scratch.dir, "plain", "notes.txt"), "mine");
    writeFileSync(path.join(scratch.dir, "empty.db"), "");
    for (const source of ["plain", "sqlite:empty.db"]) {
      const outcome = await keel(["store", "copy", source, "target"]);
      expect(outcome.code).toBe(1);
      expect(outcome.err).toMatch(/\(not_found\)/);
    }
    expect(readdirSync(path.join(scratch.dir, "plain"))).toEqual(["notes.txt"]);
    expect(readdirSync(scratch.dir).sort()).toEqual(["empty.db", "plain"]);
    expect(readdirSync(scratch.dir).includes("target")).toBe(false);
  });

  it("keel inspect of a SQLite store reads it without migrating or changing a byte of it", async () => {
    const file = path.join(scratch.dir, "k.db");
    const store = createSqliteStore({ file });
    await okValue(store.docs.put(["missions", "m1", "checkpoint"], { done: [] }, { create: true }));
    await store.close();
    const before = readdirSync(scratch.dir).sort();
    const outcome = await keel(["inspect", "sqlite:k.db", "--json"]);
    expect(outcome.code, outcome.err).toBe(0);
    expect(readdirSync(scratch.dir).sort()).toEqual(before);
  });

  it("keel workflow status of a missing store is not_found and creates nothing; plan and catalog open no store", async () => {
    writeFileSync(path.join(scratch.dir, "status.json"), JSON.stringify({ runId: "run-1" }));
    writeFileSync(path.join(scratch.dir, "task.json"), JSON.stringify({ taskId: "t1", objective: "review", workflow: "review_change", evidence: { diff: "x" } }));
    writeFileSync(path.join(scratch.dir, "config.json"), JSON.stringify({ models: [], executor: { kind: "scripted" } }));
    const status = await keel(["workflow", "status", "--request", "status.json", "--config", "config.json", "--store", "store"]);
    expect(status.code).toBe(1);
    expect(JSON.parse(status.out)).toMatchObject({ error: { code: "not_found" } });
    for (const store of ["store", "sqlite:store.db"]) {
      const plan = await keel(["workflow", "plan", "--request", "task.json", "--config", "config.json", "--store", store]);
      expect(plan.code, plan.out + plan.err).toBe(0);
      expect(JSON.parse(plan.out)).toHaveProperty("stages");
    }
    expect((await keel(["workflow", "catalog", "--store", "store"])).code).toBe(0);
    expect(readdirSync(scratch.dir).sort()).toEqual(["config.json", "status.json", "task.json"]);
  });
});

describe("reading commands over an existing filesystem store", () => {
  it("keel inspect changes nothing on disk (the tree hashed before and after)", async () => {
    const dir = path.join(scratch.dir, "store");
    await writeSampleStore(dir);
    const before = treeHash(scratch.dir);
    for (const args of [["inspect", "store"], ["inspect", "store", "--json"]]) {
      const outcome = await keel(args);
      expect(outcome.code, outcome.err).toBe(0);
      expect(outcome.out).toContain("m1");
    }
    expect(treeHash(scratch.dir)).toBe(before);
  });

  it("a store that opening would mend (torn marker, older layout) is refused by inspect, store copy and workflow status, and left as it was", async () => {
    await fsSource();
    writeFileSync(path.join(scratch.dir, "status.json"), JSON.stringify({ runId: "run-1" }));
    writeFileSync(path.join(scratch.dir, "config.json"), JSON.stringify({ models: [], executor: { kind: "scripted" } }));
    const marker = path.join(scratch.dir, "src", "_keel", "store.json");
    for (const [bytes, code] of [
      ['{"format":"keel.fs', "corrupt"],
      [JSON.stringify({ format: "keel.fs-store", version: 1 }), "unsupported"],
    ] as const) {
      writeFileSync(marker, bytes);
      const before = treeHash(scratch.dir);
      const inspect = await keel(["inspect", "src"]);
      expect(inspect.code).toBe(1);
      expect(inspect.err).toContain(`(${code})`);
      expect(inspect.err).toContain("create: true");
      const copy = await keel(["store", "copy", "src", "target"]);
      expect(copy.code).toBe(1);
      expect(copy.err).toContain(`(${code})`);
      const status = await keel(["workflow", "status", "--request", "status.json", "--config", "config.json", "--store", "src"]);
      expect(status.code).toBe(1);
      expect(JSON.parse(status.out)).toMatchObject({ error: { code } });
      expect(treeHash(scratch.dir)).toBe(before);
      expect(existsSync(path.join(scratch.dir, "target"))).toBe(false);
    }
  });
});

describe("keel workflow catalog --catalog <dir>", () => {
  it("says in its help that a missing directory is not_found and one without definitions is invalid, and does so", async () => {
    const help = await keel(["workflow", "catalog", "--help"]);
    expect(help.out).toMatch(/does not exist is refused\s+\(not_found\)/);
    expect(help.out).toMatch(/no definition file at all is reported invalid/);
    const missing = await keel(["workflow", "catalog", "--catalog", "nowhere"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.out)).toMatchObject({ error: { code: "not_found" } });
    mkdirSync(path.join(scratch.dir, "empty-catalog"));
    const empty = await keel(["workflow", "catalog", "--catalog", "empty-catalog"]);
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.out)).toMatchObject({ valid: false });
    expect(readdirSync(scratch.dir).sort()).toEqual(["empty-catalog"]);
    expect(readdirSync(path.join(scratch.dir, "empty-catalog"))).toEqual([]);
  });
});

describe("keel store copy opens the source before the target", () => {
  it("copies a store it could read, creating the target only then", async () => {
    await fsSource();
    const outcome = await keel(["store", "copy", "src", "sqlite:copy.db"]);
    expect(outcome.code, outcome.err).toBe(0);
    expect(existsSync(path.join(scratch.dir, "copy.db"))).toBe(true);
  });

  it("says in its help that --force merges into the target", async () => {
    const outcome = await keel(["store", "--help"]);
    expect(outcome.out).toMatch(/--force\s+merge into a target/);
    expect(outcome.out).toMatch(/other keys are kept/);
  });

  it("refuses a store URL with NUL or another control character as bad usage (exit 2), creating nothing", async () => {
    await fsSource();
    for (const args of [["store", "copy", "src", "tar\0get"], ["store", "copy", "sr\0c", "target"], ["store", "copy", "src", "sqlite:t\0.db"], ["inspect", "sr\nc"]]) {
      const outcome = await keel(args);
      expect(outcome.code).toBe(2);
      expect(hasStackTrace(outcome.err)).toBe(false);
    }
    expect(readdirSync(scratch.dir)).toEqual(["src"]);
  });
});

describeWithPostgres("reading commands given a PostgreSQL schema that does not exist", () => {
  const schemaExists = async (schema: string) => (await adminQuery("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema])).length > 0;

  it("keel inspect: not_found, exit 1, the schema is not created", async () => {
    const schema = freshSchemaName();
    try {
      const outcome = await keel(["inspect", `${testPostgresUrl}?schema=${schema}`]);
      expect(outcome.code).toBe(1);
      expect(outcome.err).toMatch(/\(not_found\): the PostgreSQL schema "keel_test_\w+" does not exist/);
      expect(await schemaExists(schema)).toBe(false);
    } finally {
      await dropSchema(schema);
    }
  });

  it("keel store copy from it: not_found, exit 1, no schema and no target created", async () => {
    const schema = freshSchemaName();
    const target = freshSchemaName();
    try {
      for (const to of ["target", `${testPostgresUrl}?schema=${target}`]) {
        const outcome = await keel(["store", "copy", `${testPostgresUrl}?schema=${schema}`, to]);
        expect(outcome.code).toBe(1);
        expect(outcome.err).toMatch(/\(not_found\)/);
      }
      expect(await schemaExists(schema)).toBe(false);
      expect(await schemaExists(target)).toBe(false);
      expect(readdirSync(scratch.dir)).toEqual([]);
    } finally {
      await dropSchema(schema);
      await dropSchema(target);
    }
  });

  it("keel store copy from a schema that holds no Keel store: not_found, no table created in it", async () => {
    const schema = freshSchemaName();
    try {
      await adminQuery(`CREATE SCHEMA "${schema}"`);
      const outcome = await keel(["store", "copy", `${testPostgresUrl}?schema=${schema}`, "target"]);
      expect(outcome.code).toBe(1);
      expect(outcome.err).toMatch(/holds no Keel store/);
      expect(await adminQuery("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [schema])).toEqual([]);
      expect(readdirSync(scratch.dir)).toEqual([]);
    } finally {
      await dropSchema(schema);
    }
  });

  it("keel inspect of a system schema is bad usage (exit 2), nothing created", async () => {
    const outcome = await keel(["inspect", `${testPostgresUrl}?schema=pg_catalog`]);
    expect(outcome.code).toBe(2);
    expect(outcome.err).toMatch(/\(invalid_input\).*system schema/);
  });
});
