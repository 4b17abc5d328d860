/**
 * Generates skill trees on disk for the tests (the recorded real samples are read through
 * test/support/shared-fixtures.ts). Not part of the package build.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { SkillEntry, SkillRoot, SkillView } from "../skill-view.js";

/** The repository root (`/work/main` in the workspace). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");

/** A temporary directory, removed by `cleanup`. */
export function temporaryDirectory(prefix = "keel-skills-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** SKILL.md text with the given frontmatter lines (written verbatim) and body. */
export function skillText(frontmatter: Record<string, string | undefined>, body = "# Body\n\nDo the thing.\n"): string {
  const lines = Object.entries(frontmatter)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}: ${value}`);
  return ["---", ...lines, "---", body].join("\n");
}

/** Writes `<dir>/SKILL.md` (creating `dir`), named after the directory unless told otherwise. */
export function writeSkill(dir: string, options: { name?: string; description?: string; body?: string; file?: string; extra?: Record<string, string> } = {}): string {
  mkdirSync(dir, { recursive: true });
  const name = options.name ?? dir.split(/[\\/]/).pop() ?? "skill";
  const text = skillText({ name, description: options.description ?? `Does ${name} things. Use when ${name} is asked for.`, ...options.extra }, options.body);
  const path = join(dir, options.file ?? "SKILL.md");
  writeFileSync(path, text);
  return path;
}

/** A skill entry for pure tests (no file behind it). */
export function entry(overrides: Partial<SkillEntry> & { name: string }): SkillEntry {
  const role = overrides.role ?? "engineer";
  const root = overrides.root ?? `/skills/project/${role}`;
  return {
    description: `Does ${overrides.name}.`,
    license: null,
    compatibility: null,
    metadata: {},
    allowedTools: null,
    disableModelInvocation: false,
    path: `${root}/${overrides.name}/SKILL.md`,
    directory: `${root}/${overrides.name}`,
    relativePath: overrides.name,
    root,
    layer: "project",
    role,
    ownership: role === "engineer" ? "own" : "reference",
    bytes: 100,
    ...overrides,
  };
}

/** A view for pure tests: roots derived from the entries (in order of first appearance). */
export function viewOf(skills: SkillEntry[], role = "engineer"): SkillView {
  const roots: SkillRoot[] = [];
  for (const skill of skills) {
    if (!roots.some((root) => root.path === skill.root)) roots.push({ path: skill.root, layer: skill.layer, role: skill.role, ownership: skill.ownership });
  }
  return {
    role,
    mode: "lenient",
    roots,
    own: skills.filter((skill) => skill.ownership === "own"),
    reference: skills.filter((skill) => skill.ownership === "reference"),
    skills,
    hidden: [],
    shadowed: [],
    diagnostics: [],
    stats: { skillFiles: skills.length, cacheHits: 0, directories: 0 },
  };
}
