import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory, writeSkill } from "./__fixtures__/skill-tree.js";
import { getSkillVisibility, importSkill, setSkillVisibility } from "./index.js";

let work: { dir: string; cleanup: () => void };
let layer: string;
beforeEach(async () => {
  work = temporaryDirectory("keel-visibility-");
  layer = join(work.dir, "layer");
  const from = join(work.dir, "source", "pdf");
  writeSkill(from);
  (await importSkill({ from, layer, role: "writer", routing: "unclassified" }))._unsafeUnwrap();
});
afterEach(() => work.cleanup());

describe("getSkillVisibility", () => {
  it("reads what setSkillVisibility set, automatic by default, and writes nothing", async () => {
    expect((await getSkillVisibility({ layer, role: "writer", name: "pdf" }))._unsafeUnwrap()).toEqual({ name: "pdf", visibility: "automatic" });
    expect(existsSync(join(layer, "writer", ".keel-visibility.json"))).toBe(false);
    (await setSkillVisibility({ layer, role: "writer", name: "pdf", visibility: "explicit-only" }))._unsafeUnwrap();
    expect((await getSkillVisibility({ layer, role: "writer", name: "pdf" }))._unsafeUnwrap().visibility).toBe("explicit-only");
    (await setSkillVisibility({ layer, role: "writer", name: "pdf", visibility: "automatic" }))._unsafeUnwrap();
    expect((await getSkillVisibility({ layer, role: "writer", name: "pdf" }))._unsafeUnwrap().visibility).toBe("automatic");
  });

  it("answers not_found for a missing skill, corrupt for a broken file, invalid_input for bad options", async () => {
    expect((await getSkillVisibility({ layer, role: "writer", name: "absent" }))._unsafeUnwrapErr().code).toBe("not_found");
    expect((await getSkillVisibility({ layer, role: "../x", name: "pdf" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await getSkillVisibility({ layer, role: "writer", name: "pdf", visibility: "automatic" } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    writeFileSync(join(layer, "writer", ".keel-visibility.json"), "{ broken");
    expect((await getSkillVisibility({ layer, role: "writer", name: "pdf" }))._unsafeUnwrapErr().code).toBe("corrupt");
  });
});
