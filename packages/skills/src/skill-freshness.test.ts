import { mkdirSync, realpathSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEventBus, createManualClock, type KeelEventMap } from "@keel/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { skillText, temporaryDirectory, writeSkill } from "./__fixtures__/skill-tree.js";
import { createSkillLibrary, type SkillLibrary } from "./skill-library.js";
import type { SkillView } from "./skill-view.js";

let root = "";
let cleanup = () => {};
beforeEach(() => {
  const made = temporaryDirectory();
  root = realpathSync(made.dir);
  cleanup = made.cleanup;
});
afterEach(() => cleanup());

const resolveWith = async (library: SkillLibrary, role = "engineer"): Promise<SkillView> => (await library.resolve(role))._unsafeUnwrap();
const descriptions = (view: SkillView) => Object.fromEntries(view.skills.map((skill) => [skill.name, skill.description]));

/** Rewrites a file in place and puts its mtime back, as a coarse-timestamp filesystem would show it. */
function rewriteKeepingMtime(path: string, text: string): void {
  const before = statSync(path);
  writeFileSync(path, text);
  utimesSync(path, before.atime, before.mtime);
}

describe("freshness: the next resolve sees the disk as it is", () => {
  it("shows a skill written, edited (same size, right away) or removed, without restart", async () => {
    const library = createSkillLibrary({ layers: [{ name: "project", dir: join(root, "project") }] });
    expect((await resolveWith(library)).skills).toEqual([]);
    const path = writeSkill(join(root, "project/engineer/alpha"), { description: "version one" });
    expect(descriptions(await resolveWith(library))).toEqual({ alpha: "version one" });
    rewriteKeepingMtime(path, skillText({ name: "alpha", description: "version two" }));
    expect(descriptions(await resolveWith(library))).toEqual({ alpha: "version two" });
    writeSkill(join(root, "project/engineer/beta"));
    renameSync(join(root, "project/engineer/alpha"), join(root, "project/engineer/gamma"));
    const renamed = await resolveWith(library);
    expect(renamed.skills.map((skill) => skill.name)).toEqual(["beta", "alpha"]);
    expect(renamed.skills[1]?.path).toBe(join(root, "project/engineer/gamma/SKILL.md"));
    rmSync(join(root, "project/engineer/gamma"), { recursive: true });
    expect((await resolveWith(library)).skills.map((skill) => skill.name)).toEqual(["beta"]);
  });

  describe("with files old enough to cache", () => {
    // The library does not cache files changed in the last 2 s (coarse timestamps); a clock a
    // minute ahead makes every file here settled, so the cache is used and must stay right.
    const clock = createManualClock(Date.now() + 60_000);
    const make = () => createSkillLibrary({ layers: [{ name: "project", dir: join(root, "project") }, { name: "global", dir: join(root, "global") }], clock });

    it("reads nothing the second time when nothing changed, and gives an equal view", async () => {
      for (const name of ["a", "b", "c"]) writeSkill(join(root, `project/engineer/group/${name}`));
      writeSkill(join(root, "global/planner/plan"));
      const library = make();
      const first = await resolveWith(library);
      expect(first.stats).toEqual({ skillFiles: 4, cacheHits: 0, directories: 5 });
      const second = await resolveWith(library);
      // Only the two layer directories are listed again; role and group listings come from the cache.
      expect(second.stats).toEqual({ skillFiles: 4, cacheHits: 4, directories: 2 });
      expect({ ...second, stats: null }).toEqual({ ...first, stats: null });
    });

    it("sees an in-place edit that keeps size and mtime (through the ctime)", async () => {
      const path = writeSkill(join(root, "project/engineer/alpha"), { description: "version one" });
      writeSkill(join(root, "project/engineer/beta"));
      const library = make();
      await resolveWith(library);
      rewriteKeepingMtime(path, skillText({ name: "alpha", description: "version two" }));
      const view = await resolveWith(library);
      expect(descriptions(view).alpha).toBe("version two");
      expect(view.stats.cacheHits).toBe(1);
    });

    it("sees a size change, a removal, an added skill in a cached directory and a new role", async () => {
      const path = writeSkill(join(root, "project/engineer/alpha"), { description: "short" });
      writeSkill(join(root, "project/engineer/group/inner"));
      const library = make();
      await resolveWith(library);
      writeFileSync(path, skillText({ name: "alpha", description: "a much longer description" }));
      expect(descriptions(await resolveWith(library)).alpha).toBe("a much longer description");
      writeSkill(join(root, "project/engineer/group/second"));
      const added = await resolveWith(library);
      expect(added.skills.map((skill) => skill.name)).toEqual(["alpha", "inner", "second"]);
      // The group directory changed and was listed again; its unchanged skill still came from the cache.
      expect(added.stats).toMatchObject({ skillFiles: 3, cacheHits: 2 });
      rmSync(join(root, "project/engineer/group/inner"), { recursive: true });
      expect((await resolveWith(library)).skills.map((skill) => skill.name)).toEqual(["alpha", "second"]);
      writeSkill(join(root, "global/reviewer/review"));
      const withRole = await resolveWith(library);
      expect(withRole.roots.map((item) => item.role)).toEqual(["engineer", "reviewer"]);
      expect(withRole.reference.map((skill) => skill.name)).toEqual(["review"]);
    });

    it("sees a directory change whose mtime was put back (through the ctime)", async () => {
      writeSkill(join(root, "project/engineer/alpha"));
      const library = make();
      await resolveWith(library);
      const dir = join(root, "project/engineer");
      const before = statSync(dir);
      writeSkill(join(dir, "beta"));
      utimesSync(dir, before.atime, before.mtime);
      expect((await resolveWith(library)).skills.map((skill) => skill.name)).toEqual(["alpha", "beta"]);
    });

    it("sees a SKILL.md appearing next to a cached lowercase skill.md", async () => {
      writeSkill(join(root, "project/engineer/alpha"), { file: "skill.md", description: "lower" });
      const library = make();
      expect(descriptions(await resolveWith(library)).alpha).toBe("lower");
      expect(descriptions(await resolveWith(library)).alpha).toBe("lower");
      writeSkill(join(root, "project/engineer/alpha"), { description: "upper" });
      expect(descriptions(await resolveWith(library)).alpha).toBe("upper");
    });

    it("sees a skill directory replaced by one with the same name", async () => {
      writeSkill(join(root, "project/engineer/alpha"), { description: "old" });
      const library = make();
      await resolveWith(library);
      rmSync(join(root, "project/engineer/alpha"), { recursive: true });
      mkdirSync(join(root, "project/engineer/alpha"));
      writeFileSync(join(root, "project/engineer/alpha/SKILL.md"), skillText({ name: "alpha", description: "new" }));
      expect(descriptions(await resolveWith(library)).alpha).toBe("new");
    });
  });
});

describe("views and events", () => {
  it("returns a frozen view and emits skill.library.available with roots, OWN and REFERENCE paths and the modes", async () => {
    writeSkill(join(root, "project/engineer/build"));
    writeSkill(join(root, "project/planner/plan"));
    const events = createEventBus();
    const seen: KeelEventMap["skill.library.available"][] = [];
    events.on("skill.library.available", (event) => seen.push(event));
    const library = createSkillLibrary({ layers: [{ name: "project", dir: join(root, "project") }], mode: "strict", events });
    const view = (await library.resolve("engineer", { deliveryMode: "staged" }))._unsafeUnwrap();
    expect(Object.isFrozen(view) && Object.isFrozen(view.skills) && Object.isFrozen(view.skills[0]) && Object.isFrozen(view.skills[0]?.metadata)).toBe(true);
    expect(seen).toEqual([
      {
        type: "skill.library.available",
        at: expect.any(Number),
        role: "engineer",
        roots: [
          { path: join(root, "project/engineer"), layer: "project", role: "engineer", ownership: "own" },
          { path: join(root, "project/planner"), layer: "project", role: "planner", ownership: "reference" },
        ],
        own: [join(root, "project/engineer/build/SKILL.md")],
        reference: [join(root, "project/planner/plan/SKILL.md")],
        discoveryMode: "strict",
        deliveryMode: "staged",
      },
    ]);
    await library.resolve("planner");
    expect(seen[1]).not.toHaveProperty("deliveryMode");
    expect(seen[1]?.own).toEqual([join(root, "project/planner/plan/SKILL.md")]);
  });

  it("keeps emitting when a listener throws", async () => {
    writeSkill(join(root, "project/engineer/build"));
    const errors: unknown[] = [];
    const events = createEventBus({ onListenerError: (error) => errors.push(error) });
    events.on("skill.library.available", () => {
      throw new Error("listener bug");
    });
    const library = createSkillLibrary({ layers: [{ name: "project", dir: join(root, "project") }], events });
    expect((await library.resolve("engineer")).isOk()).toBe(true);
    expect(errors).toHaveLength(1);
  });
});
