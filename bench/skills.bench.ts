/**
 * Skill discovery: Keel's cold and warm `resolve` against pi's own loader (`loadSkillsFromDir`
 * of `@mariozechner/pi-coding-agent`) on the same generated tree of 3 layers × 12 roles × 300
 * skills = 10,800 SKILL.md files.
 *
 * - cold: a new library each time (no cache): every SKILL.md frontmatter is read and parsed;
 * - warm: one library, nothing changed since its last resolve: every file is checked, none read;
 * - pi: `loadSkillsFromDir` over each layer directory (reads and parses every file).
 *
 * Targets (issue 4): cold at least 2× faster than pi; warm at most 25% of cold. The summary
 * printed after the run gives both ratios from the medians of this run.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSkillLibrary, type SkillLibrary } from "@keel/skills";
import { loadSkillsFromDir } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, bench, describe } from "vitest";

const LAYERS = ["project", "domain", "global"] as const;
const ROLES = 12;
const SKILLS_PER_ROLE = 300;
const ROLE = "role-03";
/** Files changed within the last 2 s are never cached (coarse timestamps): wait them out once. */
const SETTLE_MS = 2_200;

const body = [
  "# Instructions",
  "",
  ...Array.from({ length: 40 }, (_, line) => `${line + 1}. Do the next step of the procedure, check the result, and note what changed.`),
  "",
  "See references/details.md for the long form.",
].join("\n");

function skillText(role: number, skill: number): string {
  return [
    "---",
    `name: skill-${role}-${skill}`,
    `description: Handles task ${skill} of role ${role}. Use when the work mentions widget ${skill}, gadget ${role} or their reports.`,
    "license: Apache-2.0",
    "metadata:",
    "  author: keel-bench",
    `  version: "1.${skill % 10}"`,
    "---",
    body,
    "",
  ].join("\n");
}

let root = "";
let layerDirs: { name: string; dir: string }[] = [];
let warm: SkillLibrary;
const timings = { cold: [] as number[], warm: [] as number[], pi: [] as number[] };

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "keel-skills-bench-"));
  layerDirs = LAYERS.map((name) => ({ name, dir: join(root, name) }));
  for (const { dir } of layerDirs) {
    for (let role = 0; role < ROLES; role++) {
      for (let skill = 0; skill < SKILLS_PER_ROLE; skill++) {
        const skillDir = join(dir, `role-${String(role).padStart(2, "0")}`, `skill-${role}-${skill}`);
        mkdirSync(skillDir, { recursive: true });
        writeFileSync(join(skillDir, "SKILL.md"), skillText(role, skill));
      }
    }
  }
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  warm = createSkillLibrary({ layers: layerDirs });
  const first = (await warm.resolve(ROLE))._unsafeUnwrap();
  const found = first.skills.length + first.shadowed.length;
  if (found !== LAYERS.length * ROLES * SKILLS_PER_ROLE) throw new Error(`expected 10,800 skills, found ${found}`);
}, 120_000);

afterAll(() => {
  if (root !== "") rmSync(root, { recursive: true, force: true });
  const cold = median(timings.cold);
  const warmMedian = median(timings.warm);
  const pi = median(timings.pi);
  console.log(
    [
      "",
      "skills resolve, 10,800 SKILL.md (medians of this run):",
      `  keel cold ${cold.toFixed(1)} ms | keel warm ${warmMedian.toFixed(1)} ms | pi loadSkillsFromDir ${pi.toFixed(1)} ms`,
      `  cold vs pi: ${(pi / cold).toFixed(2)}× faster (target ≥ 2×)`,
      `  warm / cold: ${((warmMedian / cold) * 100).toFixed(1)}% (target ≤ 25%)`,
    ].join("\n"),
  );
});

describe("skills: resolve 3 layers × 12 roles × 300 skills (10,800 SKILL.md)", () => {
  bench(
    "keel cold resolve (new library)",
    async () => {
      const started = performance.now();
      const view = (await createSkillLibrary({ layers: layerDirs }).resolve(ROLE))._unsafeUnwrap();
      timings.cold.push(performance.now() - started);
      if (view.stats.cacheHits !== 0) throw new Error("a cold resolve used a cache");
    },
    { iterations: 12, time: 0, warmupIterations: 2 },
  );

  bench(
    "keel warm resolve (no change)",
    async () => {
      const started = performance.now();
      const view = (await warm.resolve(ROLE))._unsafeUnwrap();
      timings.warm.push(performance.now() - started);
      if (view.stats.cacheHits !== 10_800) throw new Error(`a warm resolve read files (${view.stats.cacheHits} cache hits)`);
    },
    { iterations: 30, time: 0, warmupIterations: 3 },
  );

  bench(
    "pi loadSkillsFromDir (same tree)",
    () => {
      const started = performance.now();
      let count = 0;
      for (const { dir } of layerDirs) count += loadSkillsFromDir({ dir, source: "path" }).skills.length;
      timings.pi.push(performance.now() - started);
      if (count !== 10_800) throw new Error(`pi found ${count} skills`);
    },
    { iterations: 8, time: 0, warmupIterations: 1 },
  );
});
