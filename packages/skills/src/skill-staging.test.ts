import { promises as fs, lstatSync, symlinkSync, mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSkillsFromDir } from "@mariozechner/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { temporaryDirectory, writeSkill } from "./__fixtures__/skill-tree.js";
import { createSkillLibrary } from "./skill-library.js";
import { stageSkills } from "./skill-staging.js";
import type { SkillView } from "./skill-view.js";

let root = "";
let cwd = "";
let cleanup = () => {};
let view: SkillView;
beforeEach(async () => {
  const made = temporaryDirectory();
  root = realpathSync(made.dir);
  cleanup = made.cleanup;
  cwd = join(root, "work");
  mkdirSync(cwd);
  writeSkill(join(root, "skills/engineer/build"), { description: "Build things." });
  writeSkill(join(root, "skills/engineer/test"), { description: "Test things.", body: "# Test\n" });
  writeSkill(join(root, "skills/planner/plan"));
  const library = createSkillLibrary({ layers: [{ name: "project", dir: join(root, "skills") }] });
  view = (await library.resolve("engineer"))._unsafeUnwrap();
});
afterEach(() => {
  vi.restoreAllMocks();
  cleanup();
});

const staged = (...parts: string[]) => join(cwd, ".agents/skills", ...parts);

describe("stageSkills", () => {
  it("links the role's OWN skills into <cwd>/.agents/skills, where a scanning CLI (pi's loader) finds them", async () => {
    const report = (await stageSkills(view, cwd))._unsafeUnwrap();
    expect(report.directory).toBe(staged());
    expect(report.skills.map((item) => [item.name, item.action])).toEqual([
      ["build", "linked"],
      ["test", "linked"],
    ]);
    expect(readlinkSync(staged("build"))).toBe(join(root, "skills/engineer/build"));
    const loaded = loadSkillsFromDir({ dir: staged(), source: "path" });
    expect(loaded.skills.map((skill) => [skill.name, skill.description])).toEqual([
      ["build", "Build things."],
      ["test", "Test things."],
    ]);
  });

  it("never clobbers what is there, and is idempotent", async () => {
    mkdirSync(staged("build"), { recursive: true });
    writeFileSync(staged("build/SKILL.md"), "mine");
    const first = (await stageSkills(view, cwd))._unsafeUnwrap();
    expect(first.skills.map((item) => item.action)).toEqual(["skipped", "linked"]);
    expect(readFileSync(staged("build/SKILL.md"), "utf8")).toBe("mine");
    const second = (await stageSkills(view, cwd))._unsafeUnwrap();
    expect(second.skills.map((item) => item.action)).toEqual(["skipped", "unchanged"]);
  });

  it("copies when asked, or when links are refused, whole and only once", async () => {
    const copied = (await stageSkills(view, cwd, { method: "copy" }))._unsafeUnwrap();
    expect(copied.skills.map((item) => item.action)).toEqual(["copied", "copied"]);
    expect(lstatSync(staged("test")).isDirectory()).toBe(true);
    expect(readFileSync(staged("test/SKILL.md"), "utf8")).toBe(readFileSync(join(root, "skills/engineer/test/SKILL.md"), "utf8"));
    expect((await stageSkills(view, cwd, { method: "copy" }))._unsafeUnwrap().skills.map((item) => item.action)).toEqual(["unchanged", "unchanged"]);

    const other = join(root, "other");
    vi.spyOn(fs, "symlink").mockRejectedValue(Object.assign(new Error("operation not permitted"), { code: "EPERM" }));
    const fallback = (await stageSkills(view, other))._unsafeUnwrap();
    expect(fallback.skills.map((item) => item.action)).toEqual(["copied", "copied"]);
    expect((await fs.readdir(join(other, ".agents/skills"))).sort()).toEqual(["build", "test"]);
    const forced = await stageSkills(view, join(root, "third"), { method: "symlink" });
    expect(forced._unsafeUnwrapErr().code).toBe("io_failed");
  });

  it("stages every winning skill with include: all, into another directory, skipping a second skill of the same directory name", async () => {
    writeSkill(join(root, "skills/reviewer/build"), { name: "build-review" });
    const library = createSkillLibrary({ layers: [{ name: "project", dir: join(root, "skills") }] });
    const all = (await library.resolve("engineer"))._unsafeUnwrap();
    const report = (await stageSkills(all, cwd, { include: "all", into: ".claude/skills" }))._unsafeUnwrap();
    expect(report.directory).toBe(join(cwd, ".claude/skills"));
    expect(report.skills.map((item) => [item.name, item.action])).toEqual([
      ["build", "linked"],
      ["test", "linked"],
      ["plan", "linked"],
      ["build-review", "skipped"],
    ]);
  });

  it("refuses a staging directory outside the working directory and a malformed view", async () => {
    for (const into of ["../escape", "/abs", "a/../../b"]) {
      expect((await stageSkills(view, cwd, { into }))._unsafeUnwrapErr().code).toBe("invalid_input");
    }
    expect((await stageSkills({ role: "x", own: [{}], skills: [] } as never, cwd))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await stageSkills(view, cwd, { method: "hardlink" as "copy" }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("refuses a forged view whose skill lies outside every layer, staging nothing", async () => {
    const outside = join(root, "outside/evil");
    writeSkill(outside, { name: "evil", description: "Not from any layer." });
    const real = realpathSync(outside);
    const forged = { ...view.own[0]!, name: "evil", directory: real, path: join(real, "SKILL.md"), relativePath: "evil" };
    const library = createSkillLibrary({ layers: [{ name: "project", dir: join(root, "skills") }] });
    const viaLibrary = await library.stage({ ...view, own: [view.own[1]!, forged], skills: [forged] }, cwd);
    expect(viaLibrary._unsafeUnwrapErr().code).toBe("invalid_input");
    // Forged roots do not help with the library's layers given.
    const withRoots = { ...view, roots: [{ path: join(root, "outside"), layer: "x", role: "engineer", ownership: "own" as const }], own: [forged], skills: [forged] };
    expect((await library.stage(withRoots, cwd))._unsafeUnwrapErr().code).toBe("invalid_input");
    // Without layers, the view's own roots are the bound.
    expect((await stageSkills({ ...view, own: [forged], skills: [forged] }, cwd))._unsafeUnwrapErr().code).toBe("invalid_input");
    // Nothing was staged, not even the staging directory.
    expect(() => lstatSync(staged())).toThrow();
    // A link inside a layer that leads outside it is caught too (real paths are compared).
    symlinkSync(real, join(root, "skills/engineer/linked"));
    const linked = { ...forged, directory: join(root, "skills/engineer/linked"), path: join(root, "skills/engineer/linked/SKILL.md") };
    expect((await library.stage({ ...view, own: [linked], skills: [linked] }, cwd))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await library.stage(view, cwd))._unsafeUnwrap().skills.map((item) => item.action)).toEqual(["linked", "linked"]);
  });
});
