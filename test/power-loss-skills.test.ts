import path from "node:path";
import { SKILL_STEPS, writeSkillSource } from "./support/power-loss/skills-model.js";
import { describePowerLoss } from "./support/power-loss/suite.js";

/**
 * Simulated power loss for the skills layer's writes: managed imports into an empty layer,
 * replacements of a managed skill (the swap) and visibility changes, recorded under strace; each
 * state a cut can leave is checked for every acknowledged change, whole skills and a writable layer.
 */
describePowerLoss({
  title: "@keel/skills managed layer",
  workload: "test/support/power-loss/skills-workload.ts",
  checker: "test/support/power-loss/skills-checker.ts",
  // The sources to import live outside the recorded root: they are read, never written.
  prepare: (_root, scratch) => {
    for (const step of SKILL_STEPS) if (step.op === "import") writeSkillSource(path.join(scratch, "sources", `v${step.version}`), step.name, step.version);
  },
  workloadArgs: (scratch) => [path.join(scratch, "sources")],
  defaultStates: 40,
});
