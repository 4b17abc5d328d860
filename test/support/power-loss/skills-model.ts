/**
 * What the skills workload writes, computable from a name and a version (the checker compares
 * every byte it reads back with these), and what its acknowledgement lines promise.
 */
import fs from "node:fs";
import path from "node:path";

/** The managed skills, in role {@link POWER_ROLE} of the layer `<root>/layer`. */
export const POWER_SKILLS = ["alpha", "beta"] as const;
/** The role directory the workload manages. */
export const POWER_ROLE = "eng";

/** The layer directory below the recorded root. */
export function layerOf(root: string): string {
  return path.join(root, "layer");
}

/** The files of skill `name` at `version`: a SKILL.md and a reference of several 4 KiB pages. */
export function skillFiles(name: string, version: number): Record<string, string> {
  return {
    "SKILL.md": `---\nname: ${name}\ndescription: Power-loss test skill ${name}, version ${version}.\n---\n# ${name} v${version}\n\nRead references/notes.md.\n`,
    "references/notes.md": `${name} v${version}\n${`${name}.${version} `.repeat(900)}\n`,
  };
}

/** Writes skill `name` at `version` into `<directory>/<name>` (a source to import from). */
export function writeSkillSource(directory: string, name: string, version: number): string {
  const skill = path.join(directory, name);
  for (const [relative, text] of Object.entries(skillFiles(name, version))) {
    fs.mkdirSync(path.dirname(path.join(skill, relative)), { recursive: true });
    fs.writeFileSync(path.join(skill, relative), text);
  }
  return skill;
}

/** The workload's steps: imports (a version above 1 replaces the skill: a swap) and visibility changes. */
export const SKILL_STEPS: readonly ({ op: "import"; name: string; version: number } | { op: "hide" | "show"; name: string })[] = [
  { op: "import", name: "alpha", version: 1 },
  { op: "import", name: "beta", version: 1 },
  { op: "import", name: "alpha", version: 2 },
  { op: "hide", name: "beta" },
  { op: "import", name: "alpha", version: 3 },
  { op: "show", name: "beta" },
  { op: "import", name: "beta", version: 2 },
  { op: "hide", name: "alpha" },
];

/** A skill's possible states after a cut: acknowledged, and what the step in flight would make. */
export interface SkillExpectation {
  /** The version (0: absent) and visibility acknowledged. */
  version: number;
  hidden: boolean;
  pendingVersion: number | undefined;
  pendingHidden: boolean | undefined;
}

/** Reads acknowledgement lines (`T <op> <name> [version]` / `A …`) into expectations per skill. */
export function skillExpectations(lines: readonly string[]): { skills: Map<string, SkillExpectation>; acknowledged: number } {
  const skills = new Map<string, SkillExpectation>(POWER_SKILLS.map((name) => [name, { version: 0, hidden: false, pendingVersion: undefined, pendingHidden: undefined }]));
  let acknowledged = 0;
  for (const line of lines) {
    const [kind, op, name, version] = line.split(" ");
    const skill = skills.get(name!);
    if (!skill) continue;
    if (kind === "T" && op === "import") skill.pendingVersion = Number(version);
    else if (kind === "T") skill.pendingHidden = op === "hide";
    else if (kind === "A") {
      acknowledged += 1;
      if (op === "import") skill.version = Number(version);
      else skill.hidden = op === "hide";
      skill.pendingVersion = undefined;
      skill.pendingHidden = undefined;
    }
  }
  return { skills, acknowledged };
}
