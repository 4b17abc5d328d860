import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { unwrapOrThrow } from "@keel/core";
import { sharedFixtures } from "../../../test/support/shared-fixtures.js";
import { temporaryDirectory } from "./__fixtures__/skill-tree.js";
import { createSkillLibrary, discoverInstructions, importSkill, renderInstructions, setSkillVisibility, updateLibrary, withdrawSkill } from "./index.js";

const fixtures = sharedFixtures("skills", "real");
const made: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) dir.cleanup();
});

it.skipIf(!fixtures.available)("runs the README's managing example", async () => {
  const work = temporaryDirectory("keel-skills-readme-");
  made.push(work);
  const real = fixtures.dir;
  cpSync(join(real, "webapp-testing"), join(work.dir, "vendor", "pdf"), { recursive: true });
  for (const name of ["internal-comms", "template-skill"]) cpSync(join(real, name), join(work.dir, "checkouts", "skills", name), { recursive: true });
  mkdirSync(join(work.dir, ".git"));
  const at = (path: string) => join(work.dir, path);

  // --- the README example, with paths under the temporary directory ---
  const layer = at(".keel/skills");
  const imported = await importSkill({ from: at("./vendor/pdf"), layer, role: "engineer", routing: { routes: ["engineer"] } });
  if (imported.isErr()) console.error(imported.error.code, imported.error.message);
  const plan = unwrapOrThrow(await updateLibrary({ source: at("./checkouts/skills"), layer, role: "writer", routing: "unclassified" }));
  await updateLibrary({ source: at("./checkouts/skills"), layer, role: "writer", routing: "unclassified", apply: true });
  await setSkillVisibility({ layer, role: "writer", name: "internal-comms", visibility: "explicit-only" });
  await withdrawSkill({ layer, role: "writer", name: "template-skill" });
  const library = createSkillLibrary({ layers: [{ name: "project", dir: layer }] });
  const found = unwrapOrThrow(await library.get("internal-comms"));
  const instructions = unwrapOrThrow(await discoverInstructions({ cwd: work.dir }));
  const block = unwrapOrThrow(renderInstructions(instructions.files));
  // --- end of the example ---

  expect(imported._unsafeUnwrap().name).toBe("webapp-testing");
  expect(plan.entries.map((entry) => entry.action)).toEqual(["add", "add"]);
  expect(found.hidden).toBe(true);
  const view = (await library.resolve("writer"))._unsafeUnwrap();
  expect(view.skills.map((skill) => skill.name)).toEqual(["webapp-testing"]);
  expect(view.hidden.map((skill) => skill.name)).toEqual(["internal-comms"]);
  expect(block).toBe("");
});
