import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { digest } from "@keel/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyTree, faultyIo, snapshotTree } from "./__fixtures__/managed-tree.js";
import { sharedFixtures } from "../../../test/support/shared-fixtures.js";
import { temporaryDirectory } from "./__fixtures__/skill-tree.js";
import type { VerificationSummary } from "./skill-admission.js";
import { digestSkillTree } from "./skill-digest.js";
import { importSkill, readSkillMetadata } from "./skill-import.js";
import { createSkillLibrary } from "./skill-library.js";

const fixtures = sharedFixtures("skills", "real");
const real = fixtures.dir;
let work: { dir: string; cleanup: () => void };
let layer: string;

beforeEach(() => {
  work = temporaryDirectory("keel-import-");
  layer = join(work.dir, "layer");
});
afterEach(() => work.cleanup());

/** A source skill copied from a real fixture, with a `scripts/` file added. */
function source(name = "webapp-testing", extra = "print('v1')\n"): string {
  const dir = join(work.dir, "sources", `${name}-${Math.random().toString(36).slice(2)}`);
  copyTree(join(real, name), dir);
  mkdirSync(join(dir, "scripts"));
  writeFileSync(join(dir, "scripts", "run.py"), extra);
  return dir;
}

const routes = { routes: ["engineer"] };

describe.skipIf(!fixtures.available)("importSkill", () => {
  it("copies a real skill with its resources, metadata beside it, and discovery sees it", async () => {
    const from = source();
    const report = (await importSkill({ from, layer, role: "engineer", routing: routes }))._unsafeUnwrap();
    expect(report.target).toBe(join(layer, "engineer", "webapp-testing"));
    expect(report.replaced).toBe(false);
    expect(readFileSync(join(report.target, "scripts", "run.py"), "utf8")).toBe("print('v1')\n");
    expect(readFileSync(join(report.target, "SKILL.md"))).toEqual(readFileSync(join(from, "SKILL.md")));
    const metadata = (await readSkillMetadata(report.target))._unsafeUnwrap();
    expect(metadata).toEqual(report.metadata);
    expect(metadata.routing).toEqual({ status: "classified", routes: ["engineer"] });
    expect(metadata.admission).toEqual({ summaryDigest: null, decision: "unverified" });
    // The digest is the source's and the installed copy's (metadata excluded).
    const sourceDigest = (await digestSkillTree(from))._unsafeUnwrap().digest;
    expect(metadata.digest).toBe(sourceDigest);
    expect((await digestSkillTree(report.target))._unsafeUnwrap().digest).toBe(sourceDigest);
    // Nothing else was left in the layer: no staging, no lock directory.
    expect(snapshotTree(layer).filter((line) => line.includes(".keel") && !line.includes(".keel-skill.json"))).toEqual([]);
    const view = (await createSkillLibrary({ layers: [{ name: "project", dir: layer }] }).resolve("engineer"))._unsafeUnwrap();
    expect(view.own.map((skill) => skill.name)).toEqual(["webapp-testing"]);
  });

  it("imports every real fixture under strict rules", async () => {
    for (const name of ["brand-guidelines", "internal-comms", "template-skill", "webapp-testing"]) {
      const result = await importSkill({ from: join(real, name), layer, role: "writer", routing: "unclassified" });
      expect(result._unsafeUnwrap().metadata.routing).toEqual({ status: "unclassified", routes: [] });
    }
    expect(snapshotTree(join(layer, "writer")).filter((line) => line.endsWith(" dir"))).toHaveLength(4);
  });

  it("needs routing to be given: unclassified is asked for, never a default", async () => {
    const result = await importSkill({ from: source(), layer, role: "engineer" } as never);
    expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
    const badRoute = await importSkill({ from: source(), layer, role: "engineer", routing: { routes: ["a/../b"] } });
    expect(badRoute._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(existsSync(layer)).toBe(false);
  });

  it("the content digest depends on paths and bytes only", async () => {
    const one = source("template-skill", "x");
    const two = source("template-skill", "x");
    const three = source("template-skill", "y");
    const [a, b, c] = await Promise.all([one, two, three].map(async (dir) => (await digestSkillTree(dir))._unsafeUnwrap().digest));
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    writeFileSync(join(two, "scripts", "other.py"), "");
    expect((await digestSkillTree(two))._unsafeUnwrap().digest).not.toBe(a);
  });

  describe("validation refuses before anything is written", () => {
    const refused = async (prepare: (dir: string) => void) => {
      const from = source();
      prepare(from);
      const result = await importSkill({ from, layer, role: "engineer", routing: routes });
      expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
      expect(existsSync(layer)).toBe(false);
      return result._unsafeUnwrapErr();
    };
    it("a symlink anywhere in the tree, even one pointing inside", async () => {
      await refused((dir) => symlinkSync(join(dir, "SKILL.md"), join(dir, "scripts", "again.md")));
      await refused((dir) => symlinkSync("/etc", join(dir, "escape")));
    });
    it("a frontmatter that breaks the spec", async () => {
      await refused((dir) => writeFileSync(join(dir, "SKILL.md"), "---\nname: webapp-testing\ndescription: x\nmodel: big\n---\nbody\n"));
      await refused((dir) => writeFileSync(join(dir, "SKILL.md"), "---\nname: Bad_Name\ndescription: x\n---\n"));
      await refused((dir) => writeFileSync(join(dir, "SKILL.md"), "no frontmatter\n"));
    });
    it("a missing SKILL.md, a non-portable name, too many files", async () => {
      await refused((dir) => writeFileSync(join(dir, "scripts", "a\\b.py"), ""));
      const error = await refused((dir) => {
        for (let index = 0; index < 1_001; index++) writeFileSync(join(dir, "scripts", `f${index}`), "");
      });
      expect(JSON.stringify(error.details)).toContain("more than the 1000 allowed");
      const from = join(work.dir, "empty");
      mkdirSync(from);
      expect((await importSkill({ from, layer, role: "engineer", routing: routes }))._unsafeUnwrapErr().code).toBe("invalid_input");
      expect((await importSkill({ from: join(work.dir, "nowhere"), layer, role: "engineer", routing: routes }))._unsafeUnwrapErr().code).toBe("not_found");
    });
  });

  it("a dry run validates and checks the target, and writes nothing", async () => {
    const dry = (await importSkill({ from: source(), layer, role: "engineer", routing: routes, dryRun: true }))._unsafeUnwrap();
    expect(dry).toMatchObject({ name: "webapp-testing", applied: false, replaced: false });
    expect(existsSync(layer)).toBe(false);
    (await importSkill({ from: source(), layer, role: "engineer", routing: routes }))._unsafeUnwrap();
    const before = snapshotTree(layer);
    expect((await importSkill({ from: source(), layer, role: "engineer", routing: routes, dryRun: true }))._unsafeUnwrapErr().code).toBe("conflict");
    expect((await importSkill({ from: source(), layer, role: "engineer", routing: routes, dryRun: true, overwrite: true }))._unsafeUnwrap().replaced).toBe(true);
    expect(snapshotTree(layer)).toEqual(before);
  });

  describe("replacing", () => {
    it("refuses an existing skill without overwrite, replaces it with overwrite", async () => {
      const first = (await importSkill({ from: source("webapp-testing", "v1"), layer, role: "engineer", routing: routes }))._unsafeUnwrap();
      const before = snapshotTree(layer);
      const again = await importSkill({ from: source("webapp-testing", "v2"), layer, role: "engineer", routing: routes });
      expect(again._unsafeUnwrapErr().code).toBe("conflict");
      expect(snapshotTree(layer)).toEqual(before);
      const replaced = (await importSkill({ from: source("webapp-testing", "v2"), layer, role: "engineer", routing: routes, overwrite: true }))._unsafeUnwrap();
      expect(replaced.replaced).toBe(true);
      expect(readFileSync(join(first.target, "scripts", "run.py"), "utf8")).toBe("v2");
      // The replaced version stays beside the new one for its grace period; nothing else is left.
      expect(snapshotTree(join(layer, "engineer")).filter((line) => line.includes(".keel-") && !line.includes(".keel-skill.json"))).toEqual([]);
    });
  });

  describe("admission", () => {
    const summary = (patch: Partial<VerificationSummary>): VerificationSummary => ({
      backends: [{ backend: "pi", cases: 3, status: "passed", required: true }],
      unresolved: { critical: 0, high: 0, medium: 2, low: 1 },
      ...patch,
    });
    it("admits a passing summary and keeps only its digest", async () => {
      const verification = summary({});
      const report = (await importSkill({ from: source(), layer, role: "engineer", routing: routes, verification }))._unsafeUnwrap();
      expect(report.metadata.admission).toEqual({ summaryDigest: digest(verification as never), decision: "verified" });
      expect(readFileSync(join(report.target, ".keel-skill.json"), "utf8")).not.toContain("backends");
    });
    it("refuses a blocked required backend or an unresolved high failure, unless a manual decision is recorded", async () => {
      const blocked = summary({ backends: [{ backend: "codex", cases: 0, status: "blocked", required: true }] });
      const high = summary({ unresolved: { critical: 0, high: 1, medium: 0, low: 0 } });
      for (const verification of [blocked, high]) {
        const result = await importSkill({ from: source(), layer, role: "engineer", routing: routes, verification });
        expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
        expect(result._unsafeUnwrapErr().details).toMatchObject({ reason: "admission_refused" });
      }
      expect(existsSync(layer)).toBe(false);
      const optional = summary({ backends: [{ backend: "codex", cases: 0, status: "blocked", required: false }] });
      expect((await importSkill({ from: source("template-skill"), layer, role: "engineer", routing: routes, verification: optional })).isOk()).toBe(true);
      const manual = (
        await importSkill({ from: source(), layer, role: "engineer", routing: "unclassified", verification: high, manualDecision: { kind: "manual", by: "reviewer@example" } })
      )._unsafeUnwrap();
      expect(manual.metadata.admission).toEqual({ summaryDigest: digest(high as never), decision: "manual", by: "reviewer@example" });
    });
  });

  describe("the role lock", () => {
    const hostTag = createHash("sha256").update(hostname()).digest("hex").slice(0, 8);
    const holdLock = (pid: number) => {
      const dir = join(layer, ".keel", "locks", "engineer");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `held.${pid}.${hostTag}.${Date.now()}.abc123`), "");
    };
    it("a live holder makes an import wait, then fail with unavailable, changing nothing", async () => {
      holdLock(process.pid);
      const before = snapshotTree(layer);
      const started = Date.now();
      const result = await importSkill({ from: source(), layer, role: "engineer", routing: routes, lockWaitMs: 150 });
      expect(result._unsafeUnwrapErr().code).toBe("unavailable");
      expect(result._unsafeUnwrapErr().retryable).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect(snapshotTree(layer)).toEqual(before);
    });
    it("a lock left by a process that is gone is taken over, and no lock is left after", async () => {
      const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
      holdLock(Number(child.stdout));
      (await importSkill({ from: source(), layer, role: "engineer", routing: routes, lockWaitMs: 0 }))._unsafeUnwrap();
      expect(existsSync(join(layer, ".keel"))).toBe(false);
    });
  });

  describe("faults: a failure at any step leaves the layer exactly as it was", () => {
    const inStaging = (path: string) => path.includes(".keel-staging.");
    const steps = {
      validation: { method: "lstat", when: (path: string) => path.endsWith("run.py") },
      copy: { method: "writeFile", when: (path: string) => inStaging(path) && !path.endsWith(".keel-skill.json"), nth: 2 },
      "metadata write": { method: "writeFile", when: (path: string) => path.endsWith(".keel-skill.json") },
      "file sync": { method: "syncDirectory", when: inStaging },
      swap: { method: "rename", when: (path: string) => inStaging(path) },
      "sync after swap": { method: "syncDirectory", when: (path: string) => basename(path) === "engineer" },
    } as const;
    for (const [step, plan] of Object.entries(steps)) {
      for (const previous of [false, true]) {
        it(`${step}, ${previous ? "replacing a previous version" : "into an empty layer"}`, async () => {
          if (previous) (await importSkill({ from: source("webapp-testing", "old"), layer, role: "engineer", routing: routes }))._unsafeUnwrap();
          const before = snapshotTree(work.dir.concat("/layer"));
          const io = faultyIo(plan);
          const result = await importSkill({ from: source("webapp-testing", "new"), layer, role: "engineer", routing: routes, overwrite: true, io });
          expect(io.fired()).toBe(1);
          expect(result.isErr()).toBe(true);
          expect(result._unsafeUnwrapErr().code).toBe(step === "validation" ? "invalid_input" : "io_failed");
          expect(snapshotTree(layer)).toEqual(before);
        });
      }
    }

    it("a failed restore keeps the new version and says where it is; the previous one stays in place", async () => {
      (await importSkill({ from: source("webapp-testing", "old"), layer, role: "engineer", routing: routes }))._unsafeUnwrap();
      const io = faultyIo(
        { method: "rename", when: (path) => path.includes(".keel-link.") },
        { method: "unlink", when: (path) => path.includes(".keel-link.") },
      );
      const result = await importSkill({ from: source("webapp-testing", "new"), layer, role: "engineer", routing: routes, overwrite: true, io });
      const error = result._unsafeUnwrapErr();
      expect(error.code).toBe("io_failed");
      const details = error.details as { restored: boolean; version: string };
      expect(details.restored).toBe(false);
      expect(readFileSync(join(details.version, "scripts", "run.py"), "utf8")).toBe("new");
      expect(readFileSync(join(layer, "engineer", "webapp-testing", "scripts", "run.py"), "utf8")).toBe("old");
    });
  });
});
