/**
 * The skills workload recorded under strace: managed imports into an empty layer, replacements
 * of a managed skill (the swap) and visibility changes (the visibility file), in the order of
 * `SKILL_STEPS`, each between an intent line `T <op> <name> [version]` and an acknowledgement
 * `A …` in the acknowledgement file.
 *
 * Usage: node skills-workload.mjs <root> <ack file> <sources directory>
 */
import path from "node:path";
import { importSkill, setSkillVisibility } from "@keel/skills";
import { createAcknowledger } from "./acknowledge.js";
import { layerOf, POWER_ROLE, SKILL_STEPS } from "./skills-model.js";

const [root, ackFile, sources] = process.argv.slice(2);
if (!root || !ackFile || !sources) throw new Error("usage: skills-workload <root> <ack file> <sources directory>");
const say = createAcknowledger(ackFile);
const layer = layerOf(root);

for (const step of SKILL_STEPS) {
  const line = step.op === "import" ? `${step.op} ${step.name} ${step.version}` : `${step.op} ${step.name}`;
  say(`T ${line}`);
  const done =
    step.op === "import"
      ? await importSkill({ from: path.join(sources, `v${step.version}`, step.name), layer, role: POWER_ROLE, routing: { routes: [POWER_ROLE] }, overwrite: step.version > 1 })
      : await setSkillVisibility({ layer, role: POWER_ROLE, name: step.name, visibility: step.op === "hide" ? "explicit-only" : "automatic" });
  if (done.isErr()) throw new Error(`${line}: ${done.error.code}: ${done.error.message}`);
  say(`A ${line}`);
}
