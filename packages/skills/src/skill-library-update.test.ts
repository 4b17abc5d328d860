import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyTree, faultyIo, snapshotTree } from "./__fixtures__/managed-tree.js";
import { sharedFixtures } from "../../../test/support/shared-fixtures.js";
import { temporaryDirectory } from "./__fixtures__/skill-tree.js";
import { digestSkillTree } from "./skill-digest.js";
import { importSkill, readSkillMetadata } from "./skill-import.js";
import { createSkillLibrary } from "./skill-library.js";
import { installLibrary, updateLibrary } from "./skill-library-update.js";
import { setSkillVisibility } from "./skill-visibility.js";
import { purgeWithdrawnSkills, withdrawSkill } from "./skill-withdraw.js";

const fixtures = sharedFixtures("skills", "real");
const real = fixtures.dir;
const REAL = ["brand-guidelines", "internal-comms", "template-skill", "webapp-testing"];
let work: { dir: string; cleanup: () => void };
let source: string;
let layer: string;
const role = "writer";

beforeEach(() => {
  work = temporaryDirectory("keel-library-");
  source = join(work.dir, "checkout");
  layer = join(work.dir, "layer");
  for (const name of REAL) copyTree(join(real, name), join(source, "skills", name));
  writeFileSync(join(source, "README.md"), "a skills repository\n");
});
afterEach(() => work.cleanup());

const options = (extra: { apply?: boolean; force?: boolean; prune?: boolean } = {}) => ({ source, layer, role, routing: "unclassified" as const, ...extra });
const actions = (report: { entries: { name: string; action: string; done: boolean }[] }) => report.entries.map((entry) => `${entry.name}:${entry.action}${entry.done ? "+" : ""}`);
const names = async () => (await createSkillLibrary({ layers: [{ name: "project", dir: layer }] }).resolve(role))._unsafeUnwrap().skills.map((skill) => skill.name);

/** Changes upstream so that each of the four cases occurs once, and modifies one skill locally. */
function diverge(): void {
  writeFileSync(join(source, "skills", "brand-guidelines", "SKILL.md"), `${readFileSync(join(source, "skills", "brand-guidelines", "SKILL.md"), "utf8")}\nUpstream v2.\n`);
  writeFileSync(join(source, "skills", "internal-comms", "NOTES.md"), "upstream notes\n");
  writeFileSync(join(layer, role, "internal-comms", "SKILL.md"), `${readFileSync(join(layer, role, "internal-comms", "SKILL.md"), "utf8")}\nLocal edit.\n`);
  rmSync(join(source, "skills", "template-skill"), { recursive: true });
  mkdirSync(join(source, "skills", "release-notes"));
  writeFileSync(join(source, "skills", "release-notes", "SKILL.md"), "---\nname: release-notes\ndescription: Writes release notes from merged changes.\n---\n# Release notes\n");
}

describe.skipIf(!fixtures.available)("installLibrary / updateLibrary on the real skills", () => {
  it("a dry run plans and writes nothing; apply installs each skill with its source digest recorded", async () => {
    const planned = (await installLibrary(options()))._unsafeUnwrap();
    expect(planned.applied).toBe(false);
    expect(actions(planned)).toEqual(REAL.map((name) => `${name}:add`));
    expect(existsSync(layer)).toBe(false);
    const applied = (await installLibrary(options({ apply: true })))._unsafeUnwrap();
    expect(actions(applied)).toEqual(REAL.map((name) => `${name}:add+`));
    expect(await names()).toEqual(REAL);
    const state = JSON.parse(readFileSync(join(layer, role, ".keel-library.json"), "utf8"));
    for (const name of REAL) {
      const upstream = (await digestSkillTree(join(source, "skills", name)))._unsafeUnwrap().digest;
      expect(state.skills[name]).toEqual({ library: applied.library, path: `skills/${name}`, digest: upstream });
      expect((await readSkillMetadata(join(layer, role, name)))._unsafeUnwrap()).toMatchObject({ digest: upstream, source: { library: applied.library } });
    }
    expect(actions((await updateLibrary(options()))._unsafeUnwrap())).toEqual(REAL.map((name) => `${name}:unchanged`));
  });

  it("the four digest cases: update, conflict (local edit), removed upstream, new upstream; dry run vs apply", async () => {
    (await installLibrary(options({ apply: true })))._unsafeUnwrap();
    diverge();
    const before = snapshotTree(layer);
    const plan = (await updateLibrary(options()))._unsafeUnwrap();
    expect(actions(plan)).toEqual(["brand-guidelines:update", "internal-comms:conflict", "release-notes:add", "template-skill:removed", "webapp-testing:unchanged"]);
    expect(plan.entries.find((entry) => entry.name === "internal-comms")).toMatchObject({ operation: "none" });
    expect(snapshotTree(layer)).toEqual(before);

    const applied = (await updateLibrary(options({ apply: true })))._unsafeUnwrap();
    expect(actions(applied)).toEqual(["brand-guidelines:update+", "internal-comms:conflict", "release-notes:add+", "template-skill:removed", "webapp-testing:unchanged"]);
    expect(readFileSync(join(layer, role, "brand-guidelines", "SKILL.md"), "utf8")).toContain("Upstream v2.");
    expect(readFileSync(join(layer, role, "internal-comms", "SKILL.md"), "utf8")).toContain("Local edit.");
    expect(existsSync(join(layer, role, "internal-comms", "NOTES.md"))).toBe(false);
    expect(await names()).toEqual(["brand-guidelines", "internal-comms", "release-notes", "template-skill", "webapp-testing"]);

    const forced = (await updateLibrary(options({ apply: true, force: true, prune: true })))._unsafeUnwrap();
    expect(actions(forced)).toEqual(["brand-guidelines:unchanged", "internal-comms:conflict+", "release-notes:unchanged", "template-skill:removed+", "webapp-testing:unchanged"]);
    expect(readFileSync(join(layer, role, "internal-comms", "SKILL.md"), "utf8")).not.toContain("Local edit.");
    expect(readFileSync(join(layer, role, "internal-comms", "NOTES.md"), "utf8")).toBe("upstream notes\n");
    expect(await names()).toEqual(["brand-guidelines", "internal-comms", "release-notes", "webapp-testing"]);
    // Pruned skills go to the trash, with their metadata.
    const trash = join(layer, ".keel", "trash", role);
    expect(readdirSync(trash).map((entry) => entry.split(".")[0])).toEqual(["template-skill"]);
    expect(existsSync(join(trash, readdirSync(trash)[0]!, ".keel-skill.json"))).toBe(true);
    expect(actions((await updateLibrary(options()))._unsafeUnwrap())).toEqual(["brand-guidelines:unchanged", "internal-comms:unchanged", "release-notes:unchanged", "webapp-testing:unchanged"]);
  });

  it("a skill of the same name that the library did not install is a conflict, replaced only with force", async () => {
    (await importSkill({ from: join(real, "template-skill"), layer, role, routing: { routes: ["writer"] } }))._unsafeUnwrap();
    writeFileSync(join(source, "skills", "template-skill", "SKILL.md"), "---\nname: template-skill\ndescription: The library's own.\n---\n");
    const plan = (await installLibrary(options({ apply: true })))._unsafeUnwrap();
    expect(actions(plan)).toContain("template-skill:conflict");
    expect(readFileSync(join(layer, role, "template-skill", "SKILL.md"), "utf8")).not.toContain("library's own");
    (await installLibrary(options({ apply: true, force: true })))._unsafeUnwrap();
    expect(readFileSync(join(layer, role, "template-skill", "SKILL.md"), "utf8")).toContain("library's own");
    // The replaced skill kept its routing; its source is now the library.
    expect((await readSkillMetadata(join(layer, role, "template-skill")))._unsafeUnwrap().routing).toEqual({ status: "classified", routes: ["writer"] });
  });

  it("an upstream skill that fails validation is reported invalid and not installed", async () => {
    mkdirSync(join(source, "skills", "broken"));
    writeFileSync(join(source, "skills", "broken", "SKILL.md"), "---\nname: broken\n---\nno description\n");
    const applied = (await installLibrary(options({ apply: true })))._unsafeUnwrap();
    expect(actions(applied)).toContain("broken:invalid");
    expect(existsSync(join(layer, role, "broken"))).toBe(false);
  });

  it("explicit-only: omitted from resolve, found by get, reported hidden, kept across updates", async () => {
    (await installLibrary(options({ apply: true })))._unsafeUnwrap();
    expect((await setSkillVisibility({ layer, role, name: "brand-guidelines", visibility: "explicit-only" }))._unsafeUnwrap().changed).toBe(true);
    const library = createSkillLibrary({ layers: [{ name: "project", dir: layer }] });
    const check = async () => {
      const view = (await library.resolve(role))._unsafeUnwrap();
      expect(view.skills.map((skill) => skill.name)).not.toContain("brand-guidelines");
      expect(view.hidden.map((skill) => skill.name)).toEqual(["brand-guidelines"]);
      const found = (await library.get("brand-guidelines"))._unsafeUnwrap();
      expect(found.hidden).toBe(true);
      expect(found.skill.directory).toBe(join(layer, role, "brand-guidelines"));
      expect((await library.get("brand-guidelines", { role: "other" }))._unsafeUnwrap().skill.ownership).toBe("reference");
    };
    await check();
    writeFileSync(join(source, "skills", "brand-guidelines", "SKILL.md"), `${readFileSync(join(source, "skills", "brand-guidelines", "SKILL.md"), "utf8")}\nv2\n`);
    expect(actions((await updateLibrary(options({ apply: true })))._unsafeUnwrap())).toContain("brand-guidelines:update+");
    await check();
    expect((await library.get("missing"))._unsafeUnwrapErr().code).toBe("not_found");
    (await setSkillVisibility({ layer, role, name: "brand-guidelines", visibility: "automatic" }))._unsafeUnwrap();
    expect((await library.resolve(role))._unsafeUnwrap().skills.map((skill) => skill.name)).toContain("brand-guidelines");
    expect((await setSkillVisibility({ layer, role, name: "nope", visibility: "explicit-only" }))._unsafeUnwrapErr().code).toBe("not_found");
  });

  it("withdraw: the next resolve no longer offers it, an update does not bring it back, purge deletes it", async () => {
    (await installLibrary(options({ apply: true })))._unsafeUnwrap();
    const library = createSkillLibrary({ layers: [{ name: "project", dir: layer }] });
    expect((await library.resolve(role))._unsafeUnwrap().skills.map((skill) => skill.name)).toContain("webapp-testing");
    const withdrawn = (await withdrawSkill({ layer, role, name: "webapp-testing" }))._unsafeUnwrap();
    expect(readFileSync(join(withdrawn.trash, ".keel-skill.json"), "utf8")).toContain("webapp-testing");
    expect((await library.resolve(role))._unsafeUnwrap().skills.map((skill) => skill.name)).not.toContain("webapp-testing");
    expect(actions((await updateLibrary(options({ apply: true })))._unsafeUnwrap())).toContain("webapp-testing:withdrawn");
    expect(existsSync(join(layer, role, "webapp-testing"))).toBe(false);
    expect((await withdrawSkill({ layer, role, name: "webapp-testing" }))._unsafeUnwrapErr().code).toBe("not_found");
    expect((await purgeWithdrawnSkills({ layer, role }))._unsafeUnwrap()).toEqual([withdrawn.trash]);
    expect(existsSync(withdrawn.trash)).toBe(false);
  });

  it("refuses bad options and a missing source with typed errors", async () => {
    expect((await updateLibrary({ source, layer, role } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await updateLibrary({ ...options(), role: "../x" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await updateLibrary({ ...options(), source: join(work.dir, "nope") }))._unsafeUnwrapErr().code).toBe("not_found");
  });
});

describe.skipIf(!fixtures.available)("a failure while applying", () => {
  it("a withdrawal whose move is refused leaves the layer exactly as it was", async () => {
    (await installLibrary(options({ apply: true })))._unsafeUnwrap();
    const before = snapshotTree(layer);
    const io = faultyIo({ method: "rename", when: (path) => path.endsWith(join(role, "webapp-testing")) });
    expect((await withdrawSkill({ layer, role, name: "webapp-testing", io }))._unsafeUnwrapErr().code).toBe("io_failed");
    expect(io.fired()).toBe(1);
    expect(snapshotTree(layer)).toEqual(before);
  });

  it("leaves the failed skill and its record as they were; the skills before it stay applied and recorded; a rerun finishes", async () => {
    const io = faultyIo({ method: "rename", when: (path) => path.includes(".keel-staging.internal-comms.") });
    const failed = await installLibrary({ ...options({ apply: true }), io });
    expect(failed._unsafeUnwrapErr().code).toBe("io_failed");
    expect(existsSync(join(layer, role, "internal-comms"))).toBe(false);
    expect(readdirSync(join(layer, role)).filter((name) => name.startsWith(".keel-") && name !== ".keel-library.json")).toEqual([]);
    const state = JSON.parse(readFileSync(join(layer, role, ".keel-library.json"), "utf8"));
    expect(Object.keys(state.skills)).toEqual(["brand-guidelines"]);
    const rerun = (await installLibrary(options({ apply: true })))._unsafeUnwrap();
    expect(actions(rerun)).toEqual(["brand-guidelines:unchanged", "internal-comms:add+", "template-skill:add+", "webapp-testing:add+"]);
  });
});
