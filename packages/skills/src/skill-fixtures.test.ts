/**
 * Every file of the shared skill fixtures (`../shared/fixtures/skills/`), classified as the
 * Agent Skills spec says, in both discovery modes; and lenient mode loads what pi's own loader
 * loads from the same edge cases.
 */
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { createEventBus, type KeelEventMap } from "@keel/core";
import { loadSkillsFromDir } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { sharedFixtures } from "../../../test/support/shared-fixtures.js";
import { createSkillLibrary } from "./skill-library.js";
import type { SkillDiagnosticCode, SkillView } from "./skill-view.js";

const { dir: fixtures, available } = sharedFixtures("skills");

/** How each SKILL.md of the fixtures must come out. `loaded` is the name it loads under. */
interface Expected {
  lenient: { loaded?: string; codes: SkillDiagnosticCode[] };
  strict: { loaded?: string; codes: SkillDiagnosticCode[] };
}
const clean = (name: string): Expected => ({ lenient: { loaded: name, codes: [] }, strict: { loaded: name, codes: [] } });
const warned = (name: string, codes: SkillDiagnosticCode[]): Expected => ({ lenient: { loaded: name, codes }, strict: { codes } });
const skipped = (codes: SkillDiagnosticCode[]): Expected => ({ lenient: { codes }, strict: { codes } });

const EXPECTED: Record<string, Expected> = {
  "real/brand-guidelines/SKILL.md": clean("brand-guidelines"),
  "real/internal-comms/SKILL.md": clean("internal-comms"),
  "real/template-skill/SKILL.md": clean("template-skill"),
  "real/webapp-testing/SKILL.md": clean("webapp-testing"),
  "edge-cases/skills/consecutive-hyphens/SKILL.md": warned("bad--name", ["invalid_name", "name_mismatch"]),
  "edge-cases/skills/disable-model-invocation/SKILL.md": warned("disable-model-invocation", ["unknown_field"]),
  "edge-cases/skills/invalid-name-chars/SKILL.md": warned("Invalid_Name", ["invalid_name", "name_mismatch"]),
  "edge-cases/skills/invalid-yaml/SKILL.md": skipped(["invalid_yaml"]),
  "edge-cases/skills/long-name/SKILL.md": warned(
    "this-is-a-very-long-skill-name-that-exceeds-the-sixty-four-character-limit-set-by-the-standard",
    ["invalid_name", "name_mismatch"],
  ),
  "edge-cases/skills/missing-description/SKILL.md": skipped(["missing_description"]),
  "edge-cases/skills/multiline-description/SKILL.md": clean("multiline-description"),
  "edge-cases/skills/name-mismatch/SKILL.md": warned("different-name", ["name_mismatch"]),
  "edge-cases/skills/nested/child-skill/SKILL.md": clean("child-skill"),
  "edge-cases/skills/no-frontmatter/SKILL.md": skipped(["no_frontmatter"]),
  "edge-cases/skills/root-skill-preferred/SKILL.md": warned("root-skill-preferred", ["missing_name"]),
  "edge-cases/skills/unknown-field/SKILL.md": warned("unknown-field", ["unknown_field"]),
  "edge-cases/skills/valid-skill/SKILL.md": clean("valid-skill"),
  "edge-cases/skills-collision/first/calendar/SKILL.md": clean("calendar"),
  // Loses the name collision to first/calendar (same root, sorted order): shadowed, not a diagnostic.
  "edge-cases/skills-collision/second/calendar/SKILL.md": clean("calendar"),
};
/** SKILL.md files that are resources of another skill (below its SKILL.md): never skills. */
const RESOURCES = new Set(["edge-cases/skills/root-skill-preferred/nested-child/SKILL.md"]);

function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
}

async function resolveFixtures(mode: "strict" | "lenient", role = "real"): Promise<SkillView> {
  const library = createSkillLibrary({ layers: [{ name: "fixtures", dir: fixtures }], mode });
  return (await library.resolve(role))._unsafeUnwrap();
}

describe.skipIf(!available)("skill fixtures (real files)", () => {
  it("classifies every SKILL.md of the fixtures and knows every file there", () => {
    const files = allFiles(fixtures).map((path) => relative(fixtures, path).split("\\").join("/"));
    const skillFiles = files.filter((path) => /(^|\/)skill\.md$/i.test(path));
    expect(skillFiles.filter((path) => !(path in EXPECTED) && !RESOURCES.has(path))).toEqual([]);
    expect(Object.keys(EXPECTED).filter((path) => !files.includes(path))).toEqual([]);
    expect(files.filter((path) => !skillFiles.includes(path)).every((path) => path.endsWith("SOURCE.txt"))).toBe(true);
  });

  for (const mode of ["lenient", "strict"] as const) {
    it(`gives each file its ${mode} verdict: loaded under its name, or the right diagnostics`, async () => {
      const view = await resolveFixtures(mode);
      const loadedByPath = new Map(view.skills.map((skill) => [relative(fixtures, skill.path), skill.name]));
      const shadowedByPath = new Map(view.shadowed.map((item) => [relative(fixtures, item.loser.path), item.name]));
      for (const [path, expected] of Object.entries(EXPECTED)) {
        const verdict = expected[mode];
        const codes = view.diagnostics.filter((diagnostic) => relative(fixtures, diagnostic.path) === path).map((diagnostic) => diagnostic.code);
        expect(codes, path).toEqual(verdict.codes);
        expect(loadedByPath.get(path) ?? shadowedByPath.get(path), path).toBe(verdict.loaded);
        const severities = view.diagnostics.filter((diagnostic) => relative(fixtures, diagnostic.path) === path).map((diagnostic) => diagnostic.severity);
        expect(severities.every((severity) => severity === (verdict.loaded ? "warning" : "error")), path).toBe(true);
      }
      expect(view.diagnostics.every((diagnostic) => diagnostic.layer === "fixtures" && diagnostic.role !== null)).toBe(true);
    });
  }

  it("loads the real skills clean, with their spec fields and canonical paths", async () => {
    const view = await resolveFixtures("strict");
    expect(view.own.map((skill) => skill.name)).toEqual(["brand-guidelines", "internal-comms", "template-skill", "webapp-testing"]);
    const brand = view.own[0];
    expect(brand).toMatchObject({
      license: "Complete terms in LICENSE.txt",
      compatibility: null,
      metadata: {},
      allowedTools: null,
      layer: "fixtures",
      role: "real",
      ownership: "own",
      relativePath: "brand-guidelines",
      path: join(fixtures, "real/brand-guidelines/SKILL.md"),
    });
    expect(view.diagnostics.filter((diagnostic) => diagnostic.role === "real")).toEqual([]);
  });

  it("normalises a multi-line description to one line and never takes a nested SKILL.md as a skill", async () => {
    const view = await resolveFixtures("lenient");
    expect(view.skills.find((skill) => skill.name === "multiline-description")?.description).toBe(
      "This is a multiline description. It spans multiple lines. And should be normalized.",
    );
    const everything = [...view.skills.map((skill) => skill.path), ...view.diagnostics.map((diagnostic) => diagnostic.path)];
    expect(everything.some((path) => path.includes("nested-child"))).toBe(false);
    expect(view.skills.find((skill) => skill.name === "root-skill-preferred")?.description).toBe("Root skill should win.");
  });

  it("orders roots OWN first and lets the earlier root win a collision, reporting both paths", async () => {
    const layers = [{ name: "collision", dir: join(fixtures, "edge-cases/skills-collision") }];
    for (const [role, other] of [["first", "second"], ["second", "first"]] as const) {
      const events = createEventBus();
      const seen: KeelEventMap["skill.library.available"][] = [];
      events.on("skill.library.available", (event) => seen.push(event));
      const view = (await createSkillLibrary({ layers, events }).resolve(role))._unsafeUnwrap();
      expect(view.roots.map((root) => [root.role, root.ownership])).toEqual([[role, "own"], [other, "reference"]]);
      expect(view.skills.map((skill) => [skill.name, skill.role])).toEqual([["calendar", role]]);
      expect(view.shadowed).toEqual([
        {
          name: "calendar",
          winner: { path: join(fixtures, `edge-cases/skills-collision/${role}/calendar/SKILL.md`), layer: "collision", role, ownership: "own" },
          loser: { path: join(fixtures, `edge-cases/skills-collision/${other}/calendar/SKILL.md`), layer: "collision", role: other, ownership: "reference" },
        },
      ]);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ role, own: [view.skills[0]?.path], reference: [], discoveryMode: "lenient" });
    }
  });

  it("in lenient mode loads the same skills as pi's own loader does from the edge cases", async () => {
    const dir = join(fixtures, "edge-cases/skills");
    const pi = loadSkillsFromDir({ dir, source: "path" }).skills.map((skill) => relative(fixtures, skill.filePath)).sort();
    const view = await resolveFixtures("lenient");
    const ours = view.skills.map((skill) => relative(fixtures, skill.path)).filter((path) => path.startsWith("edge-cases/skills/")).sort();
    expect(ours).toEqual(pi);
  });
});
