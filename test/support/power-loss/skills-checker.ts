/**
 * Opens one rebuilt crash state of the skills workload (skills-workload.ts) in a fresh process and
 * checks it: discovery answers; every acknowledged import or swap is there at its acknowledged
 * version (or the one in flight), every file whole; no skill is half-written; every acknowledged
 * visibility holds; and the layer stays writable (a replacement and a visibility change succeed
 * and are seen). Prints `{ failures, checked }` as JSON.
 *
 * Usage: node skills-checker.mjs <state root> <ack file>
 */
import fs from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createSkillLibrary, importSkill, setSkillVisibility, type SkillLibrary } from "@keel/skills";
import { readAcknowledgements } from "./acknowledge.js";
import { layerOf, POWER_ROLE, skillExpectations, skillFiles, writeSkillSource } from "./skills-model.js";

const [root, ackFile] = process.argv.slice(2);
if (!root || !ackFile) throw new Error("usage: skills-checker <state root> <ack file>");
const { skills } = skillExpectations(readAcknowledgements(ackFile));
const layer = layerOf(root);
const failures: string[] = [];
let checked = 0;

/** The version whose files `directory` holds exactly, or a description of what it holds. */
function versionIn(directory: string, name: string, candidates: readonly number[]): number | string {
  for (const version of candidates) {
    const files = skillFiles(name, version);
    if (Object.entries(files).every(([relative, text]) => fs.existsSync(path.join(directory, relative)) && fs.readFileSync(path.join(directory, relative), "utf8") === text)) return version;
  }
  return Object.keys(skillFiles(name, 0))
    .map((relative) => `${relative}: ${fs.existsSync(path.join(directory, relative)) ? `${fs.statSync(path.join(directory, relative)).size} bytes` : "missing"}`)
    .join(", ");
}

async function checkSkills(library: SkillLibrary): Promise<void> {
  const view = await library.resolve(POWER_ROLE);
  if (view.isErr()) return void failures.push(`resolve failed: ${view.error.code}: ${view.error.message}`);
  for (const diagnostic of view.value.diagnostics) if (diagnostic.severity === "error") failures.push(`discovery reports ${diagnostic.code} at ${diagnostic.path}: ${diagnostic.message}`);
  // A skill being written (a staging or backup directory) is never discovered as a skill.
  for (const skill of view.value.skills) if (!skills.has(skill.name)) failures.push(`discovery lists ${skill.name} at ${skill.directory}, which the workload never imported`);
  for (const [name, expected] of skills) {
    const versions = [expected.version, ...(expected.pendingVersion === undefined ? [] : [expected.pendingVersion])];
    const found = await library.get(name, { role: POWER_ROLE });
    if (found.isErr()) {
      if (found.error.code !== "not_found" || !versions.includes(0)) failures.push(`skill ${name} (acknowledged v${expected.version}) is not found: ${found.error.code}: ${found.error.message}`);
      continue;
    }
    if (expected.version > 0) checked += 1;
    const version = versionIn(found.value.skill.directory, name, versions.filter((candidate) => candidate > 0));
    if (typeof version === "string") failures.push(`skill ${name} is not whole at any version of ${JSON.stringify(versions)}: ${version}`);
    const hidden = [expected.hidden, ...(expected.pendingHidden === undefined ? [] : [expected.pendingHidden])];
    if (!hidden.includes(found.value.hidden)) failures.push(`skill ${name} is ${found.value.hidden ? "hidden" : "visible"}; acknowledged ${expected.hidden ? "hidden" : "visible"}`);
    const listed = view.value.skills.some((skill) => skill.name === name);
    if (listed === found.value.hidden) failures.push(`skill ${name}: discovery ${listed ? "lists" : "leaves out"} a skill that get() says is ${found.value.hidden ? "hidden" : "visible"}`);
  }
}

async function checkWritable(): Promise<void> {
  const sources = fs.mkdtempSync(path.join(tmpdir(), "keel-power-skill-"));
  try {
    for (const name of skills.keys()) {
      const imported = await importSkill({ from: writeSkillSource(sources, name, 9), layer, role: POWER_ROLE, routing: { routes: [POWER_ROLE] }, overwrite: true });
      if (imported.isErr()) failures.push(`importing ${name} after the cut failed: ${imported.error.code}: ${imported.error.message}`);
      const hidden = await setSkillVisibility({ layer, role: POWER_ROLE, name, visibility: "explicit-only" });
      if (hidden.isErr()) failures.push(`hiding ${name} after the cut failed: ${hidden.error.code}: ${hidden.error.message}`);
    }
    const library = createSkillLibrary({ layers: [{ name: "project", dir: layer }] });
    for (const name of skills.keys()) {
      const found = await library.get(name, { role: POWER_ROLE });
      if (found.isErr()) failures.push(`skill ${name} written after the cut is not found: ${found.error.code}`);
      else if (versionIn(found.value.skill.directory, name, [9]) !== 9 || !found.value.hidden) failures.push(`skill ${name} written after the cut does not read back whole and hidden`);
    }
  } finally {
    fs.rmSync(sources, { recursive: true, force: true });
  }
}

let library: SkillLibrary | undefined;
try {
  library = createSkillLibrary({ layers: [{ name: "project", dir: layer }] });
} catch (error) {
  failures.push(`the library does not open: ${String(error)}`);
}
if (library) {
  await checkSkills(library);
  await checkWritable();
}
console.log(JSON.stringify({ failures, checked }));
process.exit(0);
