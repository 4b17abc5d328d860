import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KeelError } from "@keel/core";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { skillText, temporaryDirectory, writeSkill } from "./__fixtures__/skill-tree.js";
import { createSkillLibrary, type SkillLibraryOptions } from "./skill-library.js";
import type { SkillView } from "./skill-view.js";

let root = "";
let cleanup = () => {};
beforeEach(() => {
  const made = temporaryDirectory();
  root = realpathSync(made.dir);
  cleanup = made.cleanup;
});
afterEach(() => cleanup());

const layersOf = (...names: string[]) => names.map((name) => ({ name, dir: join(root, name) }));

async function resolve(role: string, options: Partial<SkillLibraryOptions> = {}): Promise<SkillView> {
  const library = createSkillLibrary({ layers: layersOf("project", "domain", "global"), ...options });
  return (await library.resolve(role))._unsafeUnwrap();
}

const codesAt = (view: SkillView, fragment: string) => view.diagnostics.filter((diagnostic) => diagnostic.path.includes(fragment)).map((diagnostic) => diagnostic.code);

describe("layers, roles and precedence", () => {
  it("orders roots per layer: the role's own directory, then the other roles by name; missing ones are absent", async () => {
    writeSkill(join(root, "project/reviewer/review"));
    writeSkill(join(root, "project/engineer/build"));
    writeSkill(join(root, "project/architect/design"));
    writeSkill(join(root, "global/engineer/lint"));
    const view = await resolve("engineer");
    expect(view.roots.map((item) => `${item.layer}/${item.role}:${item.ownership}`)).toEqual([
      "project/engineer:own",
      "project/architect:reference",
      "project/reviewer:reference",
      "global/engineer:own",
    ]);
    expect(view.roots[0]?.path).toBe(join(root, "project/engineer"));
    expect(view.own.map((skill) => skill.name)).toEqual(["build", "lint"]);
    expect(view.reference.map((skill) => skill.name)).toEqual(["design", "review"]);
    expect(view.skills.map((skill) => skill.name)).toEqual(["build", "design", "review", "lint"]);
    expect(view.diagnostics).toEqual([]);
  });

  it("lets an earlier root win a name collision across layers and roles, listing the loser with both paths", async () => {
    writeSkill(join(root, "global/engineer/deploy"), { description: "global own" });
    writeSkill(join(root, "domain/engineer/deploy"), { description: "domain own" });
    writeSkill(join(root, "domain/planner/deploy"), { description: "domain reference" });
    writeSkill(join(root, "project/planner/deploy"), { description: "project reference" });
    const view = await resolve("engineer");
    expect(view.skills.map((skill) => skill.description)).toEqual(["project reference"]);
    expect(view.shadowed.map((item) => [item.loser.layer, item.loser.role, item.winner.layer, item.winner.role])).toEqual([
      ["domain", "engineer", "project", "planner"],
      ["domain", "planner", "project", "planner"],
      ["global", "engineer", "project", "planner"],
    ]);
    expect(view.shadowed[0]?.loser.path).toBe(join(root, "domain/engineer/deploy/SKILL.md"));
    expect(view.shadowed[0]?.winner.path).toBe(join(root, "project/planner/deploy/SKILL.md"));
  });

  it("is deterministic whatever order the files were created in, and matches a model of the precedence rule", async () => {
    const entry = fc.record({ layer: fc.constantFrom("project", "domain", "global"), role: fc.constantFrom("a", "b", "c"), name: fc.constantFrom("x", "y", "z", "w") });
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(entry, { selector: (item) => `${item.layer}/${item.role}/${item.name}`, maxLength: 12 }), fc.constantFrom("a", "b", "c"), async (entries, role) => {
        const made = temporaryDirectory();
        try {
          const base = realpathSync(made.dir);
          for (const item of entries) writeSkill(join(base, item.layer, item.role, item.name));
          const library = createSkillLibrary({ layers: ["project", "domain", "global"].map((name) => ({ name, dir: join(base, name) })) });
          const view = (await library.resolve(role))._unsafeUnwrap();
          // The model: roots per layer (own, then others by name); first root with a name wins.
          const order = (item: { layer: string; role: string }) =>
            ["project", "domain", "global"].indexOf(item.layer) * 10 + (item.role === role ? 0 : 1 + ["a", "b", "c"].indexOf(item.role));
          const sorted = [...entries].sort((left, right) => order(left) - order(right) || (left.name < right.name ? -1 : 1));
          const winners = new Map<string, (typeof entries)[number]>();
          for (const item of sorted) if (!winners.has(item.name)) winners.set(item.name, item);
          expect(view.skills.map((skill) => `${skill.layer}/${skill.role}/${skill.name}`)).toEqual([...winners.values()].map((item) => `${item.layer}/${item.role}/${item.name}`));
          expect(view.shadowed).toHaveLength(entries.length - winners.size);
          expect(view.own.every((skill) => skill.role === role) && view.reference.every((skill) => skill.role !== role)).toBe(true);
        } finally {
          made.cleanup();
        }
      }),
      { numRuns: 25 },
    );
  });

  it("takes a lowercase skill.md, prefers SKILL.md when both exist, and finds skills in grouping directories", async () => {
    writeSkill(join(root, "project/engineer/lower"), { file: "skill.md" });
    writeSkill(join(root, "project/engineer/both"), { description: "upper" });
    writeSkill(join(root, "project/engineer/both"), { description: "lower", file: "skill.md" });
    writeSkill(join(root, "project/engineer/group/inner"));
    const view = await resolve("engineer");
    expect(view.skills.map((skill) => [skill.name, skill.relativePath])).toEqual([
      ["both", "both"],
      ["inner", "group/inner"],
      ["lower", "lower"],
    ]);
    expect(view.skills[0]?.description).toBe("upper");
    expect(view.skills[2]?.path).toBe(join(root, "project/engineer/lower/skill.md"));
  });

  it("skips .git, node_modules and dot directories, and ignores unsafe role names with a diagnostic", async () => {
    writeSkill(join(root, "project/engineer/.git/hidden"));
    writeSkill(join(root, "project/engineer/node_modules/dependency"));
    writeSkill(join(root, "project/engineer/.cache/cached"));
    writeSkill(join(root, "project/node_modules/anything"));
    writeSkill(join(root, "project/bad role/skill"));
    writeSkill(join(root, "project/engineer/kept"));
    const view = await resolve("engineer");
    expect(view.skills.map((skill) => skill.name)).toEqual(["kept"]);
    expect(view.diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.role])).toEqual([["invalid_role_name", null]]);
  });

  it("treats a SKILL.md nested inside a skill as a resource of that skill", async () => {
    writeSkill(join(root, "project/engineer/outer"));
    writeSkill(join(root, "project/engineer/outer/sub/inner"));
    const view = await resolve("engineer");
    expect(view.skills.map((skill) => skill.name)).toEqual(["outer"]);
    expect(view.diagnostics).toEqual([]);
  });

  it("refuses a role that is not a safe name, and bad options at creation", async () => {
    const library = createSkillLibrary({ layers: layersOf("project") });
    for (const role of ["", "../x", "a/b", ".", 7]) {
      const result = await library.resolve(role as string);
      expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
    }
    expect((await library.resolve("a", { deliveryMode: "nope" as "native" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    const bad: unknown[] = [
      { layers: [] },
      { layers: [{ name: "a/b", dir: root }] },
      { layers: [{ name: "a", dir: root }, { name: "a", dir: root }] },
      { layers: layersOf("project"), mode: "loose" },
      { layers: layersOf("project"), limits: { maxDepth: 0 } },
      { layers: layersOf("project"), limits: { maxFiles: 3 } },
      { layers: layersOf("project"), events: {} },
      { layers: layersOf("project"), extra: true },
    ];
    for (const options of bad) {
      expect(() => createSkillLibrary(options as SkillLibraryOptions)).toThrow(KeelError);
      try {
        createSkillLibrary(options as SkillLibraryOptions);
      } catch (error) {
        expect(KeelError.is(error, "invalid_input")).toBe(true);
      }
    }
  });

  it("resolves several roles at once, each with its own ownership", async () => {
    writeSkill(join(root, "project/engineer/build"));
    writeSkill(join(root, "project/planner/plan"));
    const library = createSkillLibrary({ layers: layersOf("project") });
    const [engineer, planner, again] = await Promise.all([library.resolve("engineer"), library.resolve("planner"), library.resolve("engineer")]);
    expect(engineer._unsafeUnwrap().own.map((skill) => skill.name)).toEqual(["build"]);
    expect(planner._unsafeUnwrap().own.map((skill) => skill.name)).toEqual(["plan"]);
    expect(planner._unsafeUnwrap().reference.map((skill) => skill.name)).toEqual(["build"]);
    expect({ ...again._unsafeUnwrap(), stats: null }).toEqual({ ...engineer._unsafeUnwrap(), stats: null });
  });

  it("answers an empty view when no layer directory exists, and reports a layer that is a file", async () => {
    expect(await resolve("engineer")).toMatchObject({ roots: [], skills: [], diagnostics: [] });
    writeFileSync(join(root, "project"), "not a directory");
    const view = await resolve("engineer");
    expect(view.diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.layer])).toEqual([["not_a_directory", "project"]]);
  });
});

describe("bad skills never break the others", () => {
  it("turns each bad file into a diagnostic with path and reason while the good skills load", async () => {
    const dir = join(root, "project/engineer");
    writeSkill(join(dir, "good-one"));
    mkdirSync(join(dir, "no-description"));
    writeFileSync(join(dir, "no-description/SKILL.md"), skillText({ name: "no-description" }));
    mkdirSync(join(dir, "broken-yaml"));
    writeFileSync(join(dir, "broken-yaml/SKILL.md"), "---\nname: broken-yaml\ndescription: [open\n---\n");
    mkdirSync(join(dir, "unterminated"));
    writeFileSync(join(dir, "unterminated/SKILL.md"), "---\nname: unterminated\ndescription: d\n");
    mkdirSync(join(dir, "huge"));
    writeFileSync(join(dir, "huge/SKILL.md"), skillText({ name: "huge", description: "d" }, "x".repeat(3000)));
    mkdirSync(join(dir, "long-head"));
    writeFileSync(join(dir, "long-head/SKILL.md"), `---\nname: long-head\ndescription: d\n${"# padding\n".repeat(150)}---\n`);
    mkdirSync(join(dir, "fifo"));
    execFileSync("mkfifo", [join(dir, "fifo/SKILL.md")]);
    writeSkill(join(dir, "zz-good-two"));
    const view = await resolve("engineer", { limits: { maxFileBytes: 2048, maxFrontmatterBytes: 1024 } });
    expect(view.skills.map((skill) => skill.name)).toEqual(["good-one", "zz-good-two"]);
    expect(view.diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.path.slice(dir.length + 1)])).toEqual([
      ["invalid_yaml", "broken-yaml/SKILL.md"],
      ["unreadable", "fifo/SKILL.md"],
      ["file_too_large", "huge/SKILL.md"],
      ["frontmatter_too_large", "long-head/SKILL.md"],
      ["missing_description", "no-description/SKILL.md"],
      ["unterminated_frontmatter", "unterminated/SKILL.md"],
    ]);
    expect(view.diagnostics.every((diagnostic) => diagnostic.severity === "error" && diagnostic.message.length > 0)).toBe(true);
  });

  it("in strict mode makes a spec violation an error for that skill only", async () => {
    writeSkill(join(root, "project/engineer/fine"));
    writeSkill(join(root, "project/engineer/misnamed"), { name: "other-name" });
    writeSkill(join(root, "project/engineer/extra"), { extra: { author: "me" } });
    const strict = await resolve("engineer", { mode: "strict" });
    expect(strict.skills.map((skill) => skill.name)).toEqual(["fine"]);
    expect(strict.diagnostics.map((diagnostic) => [diagnostic.severity, diagnostic.code])).toEqual([
      ["error", "unknown_field"],
      ["error", "name_mismatch"],
    ]);
    const lenient = await resolve("engineer");
    expect(lenient.skills.map((skill) => skill.name)).toEqual(["extra", "fine", "other-name"]);
    expect(lenient.diagnostics.map((diagnostic) => diagnostic.severity)).toEqual(["warning", "warning"]);
  });
});

describe("limits", () => {
  it("caps the skills per root, deterministically keeping the first in sorted order", async () => {
    for (const name of ["e", "a", "d", "b", "c"]) writeSkill(join(root, `project/engineer/${name}`));
    writeSkill(join(root, "project/planner/p"));
    const view = await resolve("engineer", { limits: { maxSkillsPerRoot: 3 } });
    expect(view.skills.map((skill) => skill.name)).toEqual(["a", "b", "c", "p"]);
    expect(codesAt(view, "engineer")).toEqual(["skill_limit"]);
  });

  it("caps the directory depth below a root", async () => {
    writeSkill(join(root, "project/engineer/one/two/deep"));
    writeSkill(join(root, "project/engineer/one/two/three/too-deep"));
    const view = await resolve("engineer", { limits: { maxDepth: 3 } });
    expect(view.skills.map((skill) => skill.name)).toEqual(["deep"]);
    expect(view.diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.path])).toEqual([["depth_exceeded", join(root, "project/engineer/one/two/three")]]);
  });

  it("caps the directories listed per root and the roles per layer", async () => {
    for (const name of ["a", "b", "c", "d"]) writeSkill(join(root, `project/engineer/group-${name}/skill-${name}`));
    const directories = await resolve("engineer", { limits: { maxDirectoriesPerRoot: 3 } });
    expect(directories.skills.map((skill) => skill.name)).toEqual(["skill-a", "skill-b"]);
    expect(codesAt(directories, "engineer")).toEqual(["directory_limit"]);
    for (const role of ["r1", "r2", "r3"]) writeSkill(join(root, `global/${role}/s-${role}`));
    const roles = await resolve("r3", { limits: { maxRolesPerLayer: 2 } });
    expect(roles.roots.filter((item) => item.layer === "global").map((item) => item.role)).toEqual(["r1", "r2"]);
    expect(roles.diagnostics.filter((diagnostic) => diagnostic.layer === "global").map((diagnostic) => diagnostic.code)).toEqual(["role_limit"]);
  });

  it("loads 10,000 skills of one root, sorted", async () => {
    const dir = join(root, "project/engineer");
    for (let index = 0; index < 10_000; index++) {
      const name = `skill-${String(index).padStart(5, "0")}`;
      mkdirSync(join(dir, name), { recursive: true });
      writeFileSync(join(dir, name, "SKILL.md"), `---\nname: ${name}\ndescription: Skill number ${index}.\n---\n`);
    }
    const view = await resolve("engineer");
    expect(view.skills).toHaveLength(10_000);
    expect(view.diagnostics).toEqual([]);
    expect(view.skills[0]?.name).toBe("skill-00000");
    expect(view.skills[9_999]?.name).toBe("skill-09999");
    expect(view.stats.skillFiles).toBe(10_000);
  }, 60_000);
});

describe("symlinks", () => {
  it("follows a link that stays inside the layer, reporting the canonical path, and removes duplicates by real path", async () => {
    writeSkill(join(root, "project/planner/shared-plan"));
    mkdirSync(join(root, "project/engineer"));
    symlinkSync(join(root, "project/planner/shared-plan"), join(root, "project/engineer/shared-plan"));
    const engineer = await resolve("engineer");
    expect(engineer.skills.map((skill) => [skill.name, skill.role, skill.ownership, skill.path])).toEqual([
      ["shared-plan", "engineer", "own", join(root, "project/planner/shared-plan/SKILL.md")],
    ]);
    expect(engineer.diagnostics.map((diagnostic) => [diagnostic.severity, diagnostic.code, diagnostic.role])).toEqual([["info", "duplicate_path", "planner"]]);
    expect(engineer.shadowed).toEqual([]);
    const planner = await resolve("planner");
    expect(planner.own.map((skill) => skill.role)).toEqual(["planner"]);
  });

  it("does not follow links that leave the layer root (directory, file or role links)", async () => {
    const outside = join(root, "outside");
    writeSkill(join(outside, "escaped"));
    mkdirSync(join(root, "project/engineer/file-link"), { recursive: true });
    symlinkSync(join(outside, "escaped"), join(root, "project/engineer/escaped"));
    symlinkSync(join(outside, "escaped/SKILL.md"), join(root, "project/engineer/file-link/SKILL.md"));
    symlinkSync(outside, join(root, "project/linked-role"));
    writeSkill(join(root, "project/engineer/inside"));
    const view = await resolve("engineer");
    expect(view.skills.map((skill) => skill.name)).toEqual(["inside"]);
    expect(view.diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.path, diagnostic.target])).toEqual([
      ["symlink_escape", join(root, "project/linked-role"), outside],
      ["symlink_escape", join(root, "project/engineer/escaped"), join(outside, "escaped")],
      ["symlink_escape", join(root, "project/engineer/file-link/SKILL.md"), join(outside, "escaped/SKILL.md")],
    ]);
  });

  it("detects loops and broken links without hanging", async () => {
    writeSkill(join(root, "project/engineer/group/real"));
    symlinkSync(join(root, "project/engineer"), join(root, "project/engineer/group/back-to-root"));
    symlinkSync(join(root, "project/engineer/group"), join(root, "project/engineer/group/self"));
    symlinkSync("missing-target", join(root, "project/engineer/dangling"));
    symlinkSync("self-loop", join(root, "project/engineer/self-loop"));
    const view = await resolve("engineer");
    expect(view.skills.map((skill) => skill.name)).toEqual(["real"]);
    expect(view.diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["broken_symlink", "symlink_loop", "symlink_loop", "symlink_loop"]);
  });

  it("follows a SKILL.md file link inside the layer and judges it by its real directory", async () => {
    writeSkill(join(root, "project/library/real-skill"));
    mkdirSync(join(root, "project/engineer/alias"), { recursive: true });
    symlinkSync(join(root, "project/library/real-skill/SKILL.md"), join(root, "project/engineer/alias/SKILL.md"));
    const view = await resolve("engineer");
    expect(view.own.map((skill) => [skill.name, skill.path, skill.directory, skill.relativePath])).toEqual([
      ["real-skill", join(root, "project/library/real-skill/SKILL.md"), join(root, "project/library/real-skill"), "alias"],
    ]);
    expect(view.diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["duplicate_path"]);
  });
});
